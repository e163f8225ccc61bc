/** Every error the edge answers itself, with its status; docs/api.md lists each one. */
export const edgeErrors = {
  EGGMESH_BAD_REQUEST: { status: 400, message: 'the request cannot be forwarded' },
  EGGMESH_ROUTE_NOT_FOUND: { status: 404, message: 'no such route' },
  EGGMESH_BODY_TOO_LARGE: { status: 413, message: 'the body is larger than the limit' },
  EGGMESH_INTERNAL: { status: 500, message: 'internal error' },
  EGGMESH_UPSTREAM_UNAVAILABLE: { status: 502, message: 'the service behind the edge did not answer' },
  EGGMESH_UPSTREAM_TIMEOUT: { status: 504, message: 'the service behind the edge did not answer in time' },
};
/** An error the edge answers with: `{"error": message, "code": code}` and the code's status. */
export class EdgeError extends Error {
  code;
  name = 'EdgeError';
  statusCode;
  constructor(code, message = edgeErrors[code].message) {
    super(message);
    this.code = code;
    this.statusCode = edgeErrors[code].status;
  }
  toBody() {
    return { error: this.message, code: this.code };
  }
}
//# sourceMappingURL=errors.js.map
