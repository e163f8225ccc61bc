export { buildApp, type ProjectorAppOptions } from './app.js';
export { applyEntry } from './apply.js';
export { Batch, type CommittedState } from './batch.js';
export { registerProjectorMetrics } from './metrics.js';
export { type LogSource, Projector, type StepResult } from './projector.js';
