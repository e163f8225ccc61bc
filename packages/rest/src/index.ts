export { ApiError, type Issue } from './errors.js';
export { prepareRest, type RestOptions, registerRest, restNotFound } from './rest.js';
export { pathPattern, READ_METHODS, sideOf, type WriteRoute, writeRoutes } from './route-table.js';
