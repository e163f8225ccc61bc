/** Every error the edge answers itself, with its status; docs/api.md lists each one. */
export declare const edgeErrors: {
  readonly EGGMESH_BAD_REQUEST: {
    readonly status: 400;
    readonly message: 'the request cannot be forwarded';
  };
  readonly EGGMESH_ROUTE_NOT_FOUND: {
    readonly status: 404;
    readonly message: 'no such route';
  };
  readonly EGGMESH_BODY_TOO_LARGE: {
    readonly status: 413;
    readonly message: 'the body is larger than the limit';
  };
  readonly EGGMESH_INTERNAL: {
    readonly status: 500;
    readonly message: 'internal error';
  };
  readonly EGGMESH_UPSTREAM_UNAVAILABLE: {
    readonly status: 502;
    readonly message: 'the service behind the edge did not answer';
  };
  readonly EGGMESH_UPSTREAM_TIMEOUT: {
    readonly status: 504;
    readonly message: 'the service behind the edge did not answer in time';
  };
};
export type EdgeErrorCode = keyof typeof edgeErrors;
/** An error the edge answers with: `{"error": message, "code": code}` and the code's status. */
export declare class EdgeError extends Error {
  readonly code: EdgeErrorCode;
  readonly name = 'EdgeError';
  readonly statusCode: number;
  constructor(code: EdgeErrorCode, message?: string);
  toBody(): {
    error: string;
    code: EdgeErrorCode;
  };
}
//# sourceMappingURL=errors.d.ts.map
