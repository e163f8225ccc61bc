export { buildApp, type RelayAppOptions, type RelayStatus } from './app.js';
