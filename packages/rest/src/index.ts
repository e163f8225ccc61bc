export { ApiError, type Issue } from './errors.js';
export { composeHaproxyConfig, type DnsReplicas, type HaproxyOptions, haproxyConfig } from './haproxy.js';
export { prepareRest, type RestOptions, registerRest, restNotFound, STORAGE_FULL_RETRY_S } from './rest.js';
export { pathPattern, READ_METHODS, sideOf, type WriteRoute, writeRoutes } from './route-table.js';
