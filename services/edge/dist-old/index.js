export { buildApp } from './app.js';
export { EdgeError, edgeErrors } from './errors.js';
export { upstreamFor } from './routes.js';
//# sourceMappingURL=index.js.map
