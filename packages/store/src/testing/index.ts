export { type EventLogFixture, type EventLogHarness, runEventLogContract } from './event-log-contract.js';
export { type ContractHarness, runPrimaryStoreContract } from './primary-store-contract.js';
export { type ProjectionStoreHarness, runProjectionStoreContract } from './projection-store-contract.js';
export { type ReadStoreFixture, type ReadStoreHarness, runReadStoreContract } from './read-store-contract.js';
