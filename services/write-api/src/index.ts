export { buildApp, type WriteApiOptions } from './app.js';
