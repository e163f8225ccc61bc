import { serviceMemoryDefaults } from '@eggmesh/service-kit/config';
import { describe, expect, it } from 'vitest';

describe('serviceMemoryDefaults (what pnpm start and the bench soak give the services)', () => {
  it('sets a 1 MiB semi-space, two malloc arenas and no watchdog thread on an empty environment', () => {
    expect(serviceMemoryDefaults({})).toEqual({
      EGGMESH_EVENT_LOOP_STALL_MS: '0',
      NODE_OPTIONS: '--max-semi-space-size=1',
      MALLOC_ARENA_MAX: '2',
    });
  });

  it('leaves every one the environment sets to it, even when empty', () => {
    expect(
      serviceMemoryDefaults({
        NODE_OPTIONS: '',
        MALLOC_ARENA_MAX: '8',
        EGGMESH_EVENT_LOOP_STALL_MS: '10000',
      }),
    ).toEqual({});
    expect(serviceMemoryDefaults({ NODE_OPTIONS: '--max-old-space-size=512' })).toEqual({
      EGGMESH_EVENT_LOOP_STALL_MS: '0',
      MALLOC_ARENA_MAX: '2',
    });
  });
});
