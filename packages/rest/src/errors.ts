import { EggmeshError, type ErrorCode, errorTable } from '@eggmesh/service-kit';

/** The error table every service shares (service-kit); docs/api.md lists it. */
export const errorCatalogue = errorTable;
export type { ErrorCode };

export interface Issue {
  readonly path: (string | number)[];
  readonly code: string;
  readonly message: string;
}

/** An error that becomes `{ error, code, ... }` with its table status. */
export class ApiError extends EggmeshError {
  constructor(
    code: ErrorCode,
    args: readonly (string | number)[] = [],
    details: Record<string, unknown> = {},
  ) {
    super(code, args, details);
    this.name = 'ApiError';
  }
}
