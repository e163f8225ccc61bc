import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectError, send, startApp, type TestApp } from './helpers.js';

describe('UUIDs are case-insensitive and stored in lower case', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('stores ids and foreign keys in lower case and finds them in any case', async () => {
    const farmId = randomUUID().toUpperCase();
    const farm = await send(t.app, 'POST', '/farm/api', {
      id: farmId,
      name: 'F',
      farm_type: 'homestead',
      zone: 'west',
    });
    expect(farm.statusCode).toBe(201);
    expect(farm.json().id).toBe(farmId.toLowerCase());
    const coop = await send(t.app, 'POST', '/coop/api', {
      name: 'C',
      farm_id: farmId,
      capacity: 3,
      coop_type: 'barn',
    });
    expect(coop.json().farm_id).toBe(farmId.toLowerCase());
    expect((await send(t.app, 'GET', `/farm/api/${farmId}`)).statusCode).toBe(200);
    const rows = await t.reader.findBy('coop', 'farm_id', farmId.toLowerCase(), { limit: 10 });
    expect(rows).toHaveLength(1);
  });

  it('refuses the same id in another case as a duplicate', async () => {
    const id = randomUUID();
    await send(t.app, 'POST', '/farm/api', { id, name: 'F', farm_type: 'homestead', zone: 'west' });
    const again = await send(t.app, 'POST', '/farm/api', {
      id: id.toUpperCase(),
      name: 'F',
      farm_type: 'homestead',
      zone: 'west',
    });
    expectError(again, 409, 'EGGMESH_ALREADY_EXISTS');
  });
});
