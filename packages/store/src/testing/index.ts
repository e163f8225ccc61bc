export { type ContractHarness, runPrimaryStoreContract } from './primary-store-contract.js';
