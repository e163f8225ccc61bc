export { buildApp, type EdgeOptions } from './app.js';
export { EdgeError, type EdgeErrorCode, edgeErrors } from './errors.js';
export { type Upstream, upstreamFor } from './routes.js';
//# sourceMappingURL=index.d.ts.map
