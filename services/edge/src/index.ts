export { buildApp, type EdgeOptions } from './app.js';
export { type Upstream, upstreamFor } from './routes.js';
