export { buildApp, type WriteApiOptions } from './app.js';
export { ApiError, type ErrorCode, errorCatalogue } from './errors.js';
export { routeSchemas, sharedSchemas } from './route-schemas.js';
