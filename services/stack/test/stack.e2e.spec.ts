import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { serverName as kafkaServerName } from '../../../infra/kafka/server.mjs';
import { serverName } from '../../../infra/mongodb/server.mjs';
import { freePort, readApiServer, stackArgs, stackMain, stopSupervisor } from './helpers.js';

// The whole stack as `pnpm start` (SQLite) and `pnpm start:scaled` (MongoDB-wire server, Kafka broker,
// the same three processes and the relay) run it, driven through the public port: the same assertions on every tier.
// The third tier is `EGGMESH_LOG=store pnpm start:scaled`: MongoDB only, the projector tailing MongoDB's
// own event log (no broker, no relay).
// biome-ignore lint/suspicious/noExplicitAny: JSON answers are checked by value, field by field, below.
type Doc = Record<string, any>;

type Tier = 'sqlite' | 'mongodb' | 'mongodb-log';

function stackSuite(tier: Tier): void {
  const label =
    tier === 'mongodb'
      ? `scaled stack on MongoDB (${serverName}) with the log on Kafka (${kafkaServerName})`
      : tier === 'mongodb-log'
        ? `scaled stack on MongoDB (${serverName}) with the projector on MongoDB's own log`
        : 'embedded stack on SQLite';
  const args = tier === 'sqlite' ? [...stackArgs] : [...stackArgs, '--scaled'];
  describe(tier, () => {
    const dir = mkdtempSync(join(tmpdir(), 'eggmesh-stack-'));
    let stack: ChildProcess;
    let base = '';
    let env: NodeJS.ProcessEnv = {};
    let ports: Record<string, number> = {};
    const output: string[] = [];

    async function until<T>(probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
      const deadline = Date.now() + ms;
      for (;;) {
        const value = await probe().catch(() => undefined);
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`timed out; stack output:\n${output.join('\n')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }

    async function rest(method: string, path: string, body?: unknown) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return {
        status: response.status,
        position: Number(response.headers.get('x-log-position')),
        body: await response.json(),
      };
    }

    async function graph(
      path: string,
      query: string,
      headers: Record<string, string> = {},
      variables?: unknown,
    ) {
      const response = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
      expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
      return body.data as Doc;
    }

    const sortBy = <T extends Record<string, unknown>>(rows: T[], key: string) =>
      [...rows].sort((a, b) => String(a[key]).localeCompare(String(b[key])));

    beforeAll(async () => {
      expect(existsSync(stackMain), 'run `pnpm build` first').toBe(true);
      const [write, read, projector] = [await freePort(), await freePort(), await freePort()];
      base = `http://127.0.0.1:${read}`;
      ports = { 'write-api': write, 'read-api': read, projector };
      if (tier === 'mongodb') ports.relay = await freePort();
      env = {
        ...process.env,
        EGGMESH_DATA_DIR: dir,
        WRITE_API_PORT: String(write),
        READ_API_PORT: String(read),
        PROJECTOR_PORT: String(projector),
        EGGMESH_LOG_LEVEL: 'warn',
        ...(tier === 'mongodb'
          ? {
              EGGMESH_DEV_MONGODB_PORT: String(await freePort()),
              EGGMESH_DEV_KAFKA_PORT: String(await freePort()),
              RELAY_PORT: String(ports.relay),
            }
          : tier === 'mongodb-log'
            ? { EGGMESH_DEV_MONGODB_PORT: String(await freePort()), EGGMESH_LOG: 'store' }
            : {}),
      };
      stack = spawn(process.execPath, args, {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      stack.stdout?.on('data', (d) => output.push(String(d)));
      stack.stderr?.on('data', (d) => output.push(String(d)));
      const ready = async (url: string) => (await fetch(`${url}/ready`)).ok;
      await until(
        async () => ((await ready(base)) && (await ready(`http://127.0.0.1:${write}`)) ? true : undefined),
        150_000,
      );
    }, 180_000);

    afterAll(async () => {
      // Stopped like Ctrl-C when a test left it running (a failure, or tests filtered out).
      await stopSupervisor(stack);
      rmSync(dir, { recursive: true, force: true });
    }, 30_000);

    it('names the store and the log it runs on in its banner', async () => {
      const expected = {
        sqlite: ['embedded tier: SQLite files, no servers'],
        mongodb: ['scaled tier: MongoDB at ', 'the log on Kafka at '],
        'mongodb-log': ['scaled tier: MongoDB at ', 'the log in the store'],
      }[tier];
      const banner = await until(async () => {
        const text = output.join('');
        return expected.every((e) => text.includes(e)) ? text : undefined;
      });
      expect(banner.includes('relay '), 'a relay runs only with the log on Kafka').toBe(tier === 'mongodb');
    });

    describe(`the ${label} through the public port`, () => {
      const farms: Doc[] = [];
      const coops: Doc[] = [];
      const hens: Doc[] = [];

      it('answers a MeshQL-style session: REST creates, then getAll, getById, getByFarm, getByCoop and nesting', async () => {
        for (const [name, zone] of [
          ['Sunrise', 'north'],
          ['Valley', 'east'],
        ]) {
          const r = await rest('POST', '/farm/api', { name, farm_type: 'local_farm', zone });
          expect(r.status).toBe(201);
          farms.push(r.body);
        }
        for (const [i, farm] of [farms[0], farms[0], farms[1]].entries()) {
          const r = await rest('POST', '/coop/api', {
            name: `Coop ${i}`,
            farm_id: farm!.id,
            capacity: 10,
            coop_type: 'barn',
          });
          expect(r.status).toBe(201);
          coops.push(r.body);
        }
        for (const [i, coop] of [coops[0], coops[0], coops[1], coops[2]].entries()) {
          const r = await rest('POST', '/hen/api', {
            name: `Hen ${i}`,
            coop_id: coop!.id,
            breed: 'sussex',
            status: 'active',
          });
          expect(r.status).toBe(201);
          hens.push(r.body);
        }

        const all = await graph('/farm/graph', '{ getAll { id name zone } }');
        expect(sortBy(all.getAll, 'id')).toEqual(
          sortBy(
            farms.map(({ id, name, zone }) => ({ id, name, zone })),
            'id',
          ),
        );

        const one = await graph(
          '/farm/graph',
          'query ($id: ID) { getById(id: $id) { name farm_type } }',
          {},
          { id: farms[1]!.id },
        );
        expect(one.getById).toEqual({ name: 'Valley', farm_type: 'local_farm' });

        const byFarm = await graph('/coop/graph', `{ getByFarm(id: "${farms[0]!.id}") { id name } }`);
        expect(sortBy(byFarm.getByFarm, 'id').map((c: Doc) => c.id)).toEqual(
          [coops[0]!.id, coops[1]!.id].sort(),
        );

        const byCoop = await graph(
          '/hen/graph',
          `{ getByCoop(id: "${coops[0]!.id}") { name coop { name } } }`,
        );
        expect(sortBy(byCoop.getByCoop, 'name')).toEqual([
          { name: 'Hen 0', coop: { name: 'Coop 0' } },
          { name: 'Hen 1', coop: { name: 'Coop 0' } },
        ]);

        const tree = await graph(
          '/farm/graph',
          `{ getById(id: "${farms[0]!.id}") { name coops { name hens { name } } } }`,
        );
        const shape = sortBy(tree.getById.coops, 'name').map((c: Doc) => ({
          name: c.name,
          hens: c.hens.map((h: Doc) => h.name).sort(),
        }));
        expect(shape).toEqual([
          { name: 'Coop 0', hens: ['Hen 0', 'Hen 1'] },
          { name: 'Coop 1', hens: ['Hen 2'] },
        ]);
      });

      it('serves exact projections over GraphQL once they reach the write (x-min-position)', async () => {
        const container = (
          await rest('POST', '/container/api', {
            name: 'Fridge',
            container_type: 'fridge',
            capacity: 40,
            zone: 'north',
          })
        ).body;
        const other = (
          await rest('POST', '/container/api', {
            name: 'Shelf',
            container_type: 'market_shelf',
            capacity: 100,
            zone: 'north',
          })
        ).body;
        const now = new Date().toISOString();
        await rest('POST', '/storage_deposit/api', {
          container_id: container.id,
          source_type: 'farm',
          source_id: farms[0]!.id,
          eggs: 30,
          timestamp: now,
        });
        await rest('POST', '/container_transfer/api', {
          source_container_id: container.id,
          dest_container_id: other.id,
          eggs: 12,
          timestamp: now,
        });
        const consumer = (
          await rest('POST', '/consumer/api', { name: 'Bakery', consumer_type: 'bakery', zone: 'north' })
        ).body;
        await rest('POST', '/consumption_report/api', {
          consumer_id: consumer.id,
          container_id: container.id,
          eggs: 50,
          timestamp: now,
        });
        const lay = (eggs: number, quality: string, hen = hens[0]!) =>
          rest('POST', '/lay_report/api', {
            hen_id: hen.id,
            coop_id: hen.coop_id,
            farm_id: farms[0]!.id,
            eggs,
            timestamp: now,
            quality,
          });
        await lay(3, 'grade_a');
        await lay(1, 'cracked');
        const last = await lay(4, 'double_yolk', hens[1]!);
        const retire = await rest('PUT', `/hen/api/${hens[2]!.id}`, {
          name: 'Hen 2',
          coop_id: coops[1]!.id,
          breed: 'sussex',
          status: 'retired',
        });
        const position = Math.max(last.position, retire.position);
        const wait = { 'x-min-position': String(position) };

        const inventory = await graph(
          '/container_inventory/graph',
          `{ getByContainer(id: "${container.id}") { current_eggs total_deposits total_transfers_out total_consumed utilization_pct container { name } } }`,
          wait,
        );
        // 30 in, 12 out (18 left), 50 consumed: clamped at 0.
        expect(inventory.getByContainer).toEqual([
          {
            current_eggs: 0,
            total_deposits: 30,
            total_transfers_out: 12,
            total_consumed: 50,
            utilization_pct: 0,
            container: { name: 'Fridge' },
          },
        ]);
        const dest = await graph(
          '/container/graph',
          `{ getById(id: "${other.id}") { inventory { current_eggs total_transfers_in utilization_pct } } }`,
          wait,
        );
        expect(dest.getById.inventory).toEqual([
          { current_eggs: 12, total_transfers_in: 12, utilization_pct: 12 },
        ]);

        const hen = await graph(
          '/hen_productivity/graph',
          `{ getByHen(id: "${hens[0]!.id}") { eggs_today eggs_week total_eggs quality_rate farm_id } }`,
          wait,
        );
        expect(hen.getByHen).toEqual([
          { eggs_today: 4, eggs_week: 4, total_eggs: 4, quality_rate: 0.75, farm_id: farms[0]!.id },
        ]);

        const farm = await graph(
          '/graphql',
          `{ farm(id: "${farms[0]!.id}") { farmOutput { eggs_today eggs_month total_hens active_hens avg_per_hen_per_week } } }`,
          wait,
        );
        // 8 eggs today; 3 live hens through its two coops, one retired; 8 / 4 weeks / 2 active hens.
        expect(farm.farm.farmOutput).toEqual([
          { eggs_today: 8, eggs_month: 8, total_hens: 3, active_hens: 2, avg_per_hen_per_week: 1 },
        ]);
      });

      it('pushes a projection to the subscribers of every read-api replica, each fed by what the projector committed', async () => {
        // A second read-api over the same store and log, as compose runs two: each serves its own
        // subscribers from the projections the one projector commits.
        const port = await freePort();
        const replicaEnv = {
          ...env,
          READ_API_PORT: String(port),
          ...(tier === 'sqlite'
            ? {}
            : {
                EGGMESH_STORE: 'mongodb',
                EGGMESH_LOG: tier === 'mongodb' ? 'kafka' : 'store',
                EGGMESH_MONGODB_URI: `mongodb://127.0.0.1:${env.EGGMESH_DEV_MONGODB_PORT}`,
              }),
        };
        const replica = spawn(process.execPath, [readApiServer], { env: replicaEnv, stdio: 'ignore' });
        const clients: ReturnType<typeof createClient>[] = [];
        try {
          await until(
            async () => ((await fetch(`http://127.0.0.1:${port}/ready`)).ok ? true : undefined),
            60_000,
          );
          const farm = (
            await rest('POST', '/farm/api', { name: 'Live', farm_type: 'homestead', zone: 'west' })
          ).body;
          const coop = (
            await rest('POST', '/coop/api', {
              name: 'Live coop',
              farm_id: farm.id,
              capacity: 5,
              coop_type: 'barn',
            })
          ).body;
          const hen = (
            await rest('POST', '/hen/api', { name: 'Live hen', coop_id: coop.id, breed: 'leghorn' })
          ).body;
          const seen = (url: string) => {
            const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0 });
            clients.push(client);
            const values: Array<{ position: number; eggs_today: number }> = [];
            const laid = new Promise<void>((resolve, reject) => {
              client.subscribe<{ farmOutput: { position: number; farmOutput: { eggs_today: number } } }>(
                {
                  query: `subscription { farmOutput(farm_id: "${farm.id}") { position farmOutput { eggs_today } } }`,
                },
                {
                  next: ({ data }) => {
                    if (!data) return;
                    values.push({
                      position: data.farmOutput.position,
                      eggs_today: data.farmOutput.farmOutput.eggs_today,
                    });
                    if (data.farmOutput.farmOutput.eggs_today === 5) resolve();
                  },
                  error: reject,
                  complete: () => undefined,
                },
              );
            });
            return { values, laid };
          };
          const first = seen(`${base.replace('http', 'ws')}/graphql`);
          const second = seen(`ws://127.0.0.1:${port}/graphql`);
          // Both hold the farm's current document before the lay report is written.
          await until(
            async () => (first.values.length > 0 && second.values.length > 0 ? true : undefined),
            60_000,
          );
          const laid = await rest('POST', '/lay_report/api', {
            hen_id: hen.id,
            coop_id: coop.id,
            farm_id: farm.id,
            eggs: 5,
            timestamp: new Date().toISOString(),
          });
          expect(laid.status).toBe(201);
          await Promise.all([first.laid, second.laid]);
          for (const { values } of [first, second]) {
            // In commit order, ending with the commit of the lay report (at or past its log position).
            const positions = values.map((v) => v.position);
            expect(positions).toEqual([...positions].sort((a, b) => a - b));
            expect(values.at(-1)?.eggs_today).toBe(5);
            expect(values.at(-1)?.position).toBeGreaterThanOrEqual(laid.position);
          }
        } finally {
          await Promise.all(clients.map((client) => client.dispose()));
          const exited = new Promise((resolve) => replica.once('exit', resolve));
          replica.kill('SIGTERM');
          await exited;
        }
      });

      it('answers /health on every service with its own name', async () => {
        for (const [name, port] of Object.entries(ports)) {
          const body = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as Doc;
          expect(body, name).toMatchObject({ status: 'ok', service: name, pid: expect.any(Number) });
        }
      });

      it('starts its services with no node flags and no memory settings of its own', async () => {
        for (const [name, port] of Object.entries(ports)) {
          const { pid } = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as Doc;
          const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
          expect(
            environ.filter((e) => /^(MALLOC_ARENA_MAX|NODE_OPTIONS)=/.test(e)),
            name,
          ).toEqual(
            [
              `MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX}`,
              `NODE_OPTIONS=${process.env.NODE_OPTIONS}`,
            ].filter((e) => !e.endsWith('=undefined')),
          );
          const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
          const script = argv.findIndex((arg) => arg.endsWith('.js'));
          expect(argv.slice(1, script), name).toEqual([]);
        }
      });

      it('a second stack on the same ports stops, naming the busy port, and never says it is up', async () => {
        const second = mkdtempSync(join(tmpdir(), 'eggmesh-stack-second-'));
        try {
          const child = spawn(process.execPath, args, {
            // A typo is warned about once, by the supervisor, not again by each service it starts.
            env: { ...env, EGGMESH_DATA_DIR: second, EGGMESH_LOG_LEVELS: 'debug' },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let text = '';
          child.stdout?.on('data', (d) => {
            text += String(d);
          });
          child.stderr?.on('data', (d) => {
            text += String(d);
          });
          const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
          expect(code, text).toBe(1);
          // Whichever service finds its port taken first stops the stack, naming its own port.
          const stopped =
            /\n(\S+) cannot start: port (\d+) is in use by another process\. Stopping every service\./.exec(
              text,
            );
          expect(stopped, text).not.toBeNull();
          expect(ports[stopped![1]!], text).toBe(Number(stopped![2]));
          expect(text).not.toContain('eggmesh is up');
          expect(text.match(/EGGMESH_LOG_LEVELS is not an eggmesh setting/g), text).toHaveLength(1);
          expect(text).toContain('did you mean EGGMESH_LOG_LEVEL?');
        } finally {
          rmSync(second, { recursive: true, force: true });
        }
        // The first stack is untouched.
        expect((await fetch(`${base}/ready`)).ok).toBe(true);
      });

      it('stops every process on SIGINT and exits 0', async () => {
        const exited = new Promise<number | null>((resolve) => stack.once('exit', (code) => resolve(code)));
        stack.kill('SIGINT');
        expect(await exited).toBe(0);
        await expect(fetch(`${base}/health`)).rejects.toThrow();
      });
    });
  });
}

for (const tier of ['sqlite', 'mongodb', 'mongodb-log'] as const) stackSuite(tier);
