export { buildApp, type ProjectorAppOptions } from './app.js';
export { CommittedCache } from './cache.js';
export { metricsText } from './metrics.js';
export { Projector, type StepResult } from './projector.js';
