# syntax=docker/dockerfile:1
# One image for every eggmesh service (write-api, read-api, projector, relay); the compose file
# (infra/compose/docker-compose.yml) picks the entry with `command`. Build from the repository root:
#   docker build -t eggmesh:local .
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: the whole pnpm workspace, compiled, then pruned to production dependencies ----------------
FROM ${NODE_IMAGE} AS build
# better-sqlite3 compiles from source.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
RUN npm install --global pnpm@10.34.9
ENV CI=true
WORKDIR /src
# Dependencies first, so a change to the sources alone reuses this layer: `pnpm fetch` needs only the lockfile.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --frozen-lockfile --offline \
 && pnpm run build
# Production dependencies only, installed afresh from the store: no TypeScript, vitest, Biome or other
# devDependency, and not the perf workspace's load tools. The build output (dist/) stays.
RUN rm -rf node_modules packages/*/node_modules services/*/node_modules apps/*/node_modules perf/node_modules \
 && pnpm install --frozen-lockfile --offline --prod --filter '!@eggmesh/perf'
# What runs: each package's manifest, build output and node_modules links, and the store they point to
# (pnpm links are relative, so the tree moves as a whole), and the web apps' built files (the read-api
# serves them). No sources, tests or the perf workspace.
RUN mkdir -p /out \
 && cp package.json /out/ \
 && cp -a node_modules /out/ \
 && for dir in packages/* services/*; do \
      mkdir -p "/out/$dir" \
      && cp -a "$dir/package.json" "$dir/dist" "/out/$dir/" \
      && if [ -d "$dir/node_modules" ]; then cp -a "$dir/node_modules" "/out/$dir/"; fi; \
    done \
 && for dir in apps/*; do mkdir -p "/out/$dir" && cp -a "$dir/dist" "/out/$dir/"; done \
 && find /out -name '*.tsbuildinfo' -delete

# ---- runtime: node and the pruned workspace, as the unprivileged `node` user ---------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    EGGMESH_HOST=0.0.0.0 \
    EGGMESH_DATA_DIR=/data
WORKDIR /app
COPY --from=build /out /app
# /data exists and belongs to `node` so a named volume mounted there starts writable.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3034 3036 3037 5088
# Any service: `docker run eggmesh:local node services/read-api/dist/server.js`; the default is the
# embedded stack under its supervisor (SQLite in /data), the same as `pnpm start`.
CMD ["node", "services/stack/dist/main.js"]
