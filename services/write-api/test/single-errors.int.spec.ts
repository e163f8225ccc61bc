// Errors of single-entity routes carry no `index`: it names the failing item of a bulk request only.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create, expectError, newId, Samples, send, startApp, type TestApp } from './helpers.js';

describe('single-entity errors have no bulk index', () => {
  let t: TestApp;
  let samples: Samples;
  beforeAll(async () => {
    t = await startApp();
    samples = new Samples(t.app);
  });
  afterAll(async () => t.close());

  it('404 on PUT, DELETE and GET of a missing id, 409 on POST of a live id: no index', async () => {
    const missing = newId();
    const put = expectError(
      await send(t.app, 'PUT', `/farm/api/${missing}`, await samples.payload('farm')),
      404,
      'EGGMESH_NOT_FOUND',
    );
    expect(put).not.toHaveProperty('index');
    const del = expectError(await send(t.app, 'DELETE', `/farm/api/${missing}`), 404, 'EGGMESH_NOT_FOUND');
    expect(del).not.toHaveProperty('index');
    const get = expectError(await send(t.app, 'GET', `/farm/api/${missing}`), 404, 'EGGMESH_NOT_FOUND');
    expect(get).not.toHaveProperty('index');
    const existing = await create(t.app, 'farm', await samples.payload('farm'));
    const dup = expectError(
      await send(t.app, 'POST', '/farm/api', { ...(await samples.payload('farm')), id: existing.id }),
      409,
      'EGGMESH_ALREADY_EXISTS',
    );
    expect(dup).not.toHaveProperty('index');
  });

  it('a bulk request still names the failing index, also when it is the first item', async () => {
    const existing = await create(t.app, 'farm', await samples.payload('farm'));
    const dup = expectError(
      await send(t.app, 'POST', '/farm/api/bulk', [{ ...(await samples.payload('farm')), id: existing.id }]),
      409,
      'EGGMESH_ALREADY_EXISTS',
    );
    expect(dup).toHaveProperty('index', 0);
  });
});
