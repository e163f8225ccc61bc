import { readFileSync } from 'node:fs';
import { EggmeshError, errorMessage, errorTable, isErrorCode } from '@eggmesh/service-kit';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
/** Rows of docs/api.md's error table: | `CODE` | status | when | */
const rows = [...doc.matchAll(/^\| `([A-Z][A-Z_]+)` \| (\d{3}) \|/gm)].map(
  (m) => [m[1]!, Number(m[2])] as const,
);

describe('the one error table', () => {
  it('has the codes it has: adding or removing one is a decision (update this count and docs/api.md)', () => {
    expect(Object.keys(errorTable)).toHaveLength(37);
  });

  it('docs/api.md lists every code with its status, once', () => {
    const documented = new Map(rows);
    expect(rows.length, 'a code documented twice').toBe(documented.size);
    for (const [code, { status }] of Object.entries(errorTable))
      expect(documented.get(code), code).toBe(status);
  });

  it('docs/api.md documents no code that is not in the table', () => {
    expect(rows.map(([code]) => code).filter((code) => !isErrorCode(code))).toEqual([]);
  });

  it('gives every code a status and a message, and every EGGMESH_ code a 4xx or 5xx', () => {
    for (const [code, { status, message }] of Object.entries(errorTable)) {
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(600);
      expect(message.length, code).toBeGreaterThan(0);
    }
  });

  it('fills templates in order and answers { error, code, ...details } with the status', () => {
    expect(errorMessage('EGGMESH_NOT_FOUND', ['farm', 'x'])).toBe('farm x was not found');
    const error = new EggmeshError('EGGMESH_ALREADY_EXISTS', ['hen', 'y'], { index: 2 });
    expect(error.statusCode).toBe(409);
    expect(error.toBody()).toEqual({
      error: 'hen y already exists',
      code: 'EGGMESH_ALREADY_EXISTS',
      index: 2,
    });
    expect(new EggmeshError('EGGMESH_UPSTREAM_TIMEOUT', [], {}, 'custom').message).toBe('custom');
  });

  it('captures no stack for a client error (4xx), a full one for a fault (5xx), and leaves the limit as it was', () => {
    const limit = Error.stackTraceLimit;
    const frames = (error: Error) =>
      (error.stack ?? '').split('\n').filter((l) => l.trim().startsWith('at ')).length;
    expect(frames(new EggmeshError('EGGMESH_NOT_FOUND', ['hen', 'x']))).toBe(0);
    expect(frames(new EggmeshError('EGGMESH_INTERNAL'))).toBeGreaterThan(0);
    expect(Error.stackTraceLimit).toBe(limit);
    expect(frames(new Error('plain'))).toBeGreaterThan(0);
  });
});
