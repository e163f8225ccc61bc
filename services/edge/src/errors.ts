import { EggmeshError, type ErrorCode, errorTable } from '@eggmesh/service-kit';

/** The codes the edge answers itself; their status and template live in service-kit's one table. */
const edgeCodes = [
  'EGGMESH_BAD_REQUEST',
  'EGGMESH_ROUTE_NOT_FOUND',
  'EGGMESH_BODY_TOO_LARGE',
  'EGGMESH_RATE_LIMITED',
  'EGGMESH_INTERNAL',
  'EGGMESH_UPSTREAM_UNAVAILABLE',
  'EGGMESH_UPSTREAM_TIMEOUT',
] as const satisfies readonly ErrorCode[];

export type EdgeErrorCode = (typeof edgeCodes)[number];

export const edgeErrors = Object.fromEntries(edgeCodes.map((code) => [code, errorTable[code]])) as {
  readonly [C in EdgeErrorCode]: (typeof errorTable)[C];
};

/** An error the edge answers with: `{"error": message, "code": code}` and the code's status. */
export class EdgeError extends EggmeshError {
  constructor(code: EdgeErrorCode, message?: string) {
    super(code, [], {}, message);
    this.name = 'EdgeError';
  }
}
