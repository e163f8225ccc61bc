import type { SourceMapping } from './mapping.js';

// Picklists hold Title Case labels; the clean API's enums are snake case.
const farmTypes = { Megafarm: 'megafarm', 'Local Farm': 'local_farm', Homestead: 'homestead' };
const henStatuses = { Active: 'active', Retired: 'retired', Deceased: 'deceased' };
const containerTypes = { Warehouse: 'warehouse', 'Market Shelf': 'market_shelf', Fridge: 'fridge' };
const consumerTypes = { Household: 'household', Restaurant: 'restaurant', Bakery: 'bakery' };
const qualities = {
  'Grade A': 'grade_a',
  'Grade B': 'grade_b',
  Cracked: 'cracked',
  'Double Yolk': 'double_yolk',
};
const depositSources = { Farm: 'farm', Transfer: 'transfer' };
const withdrawalReasons = { Spoilage: 'spoilage', Breakage: 'breakage', 'Quality Check': 'quality_check' };
const purposes = { Cooking: 'cooking', Baking: 'baking', Resale: 'resale', Raw: 'raw' };
const coopTypes = { Standard: 'standard', Mobile: 'mobile', 'Free Range': 'free_range', Barn: 'barn' };
// The breed picklist's labels are the clean names; a label outside it is a data problem all the same.
const breeds = Object.fromEntries(
  ['Rhode Island Red', 'Leghorn', 'Buff Orpington', 'Sussex', 'Plymouth Rock', 'Australorp'].map((b) => [
    b,
    b,
  ]),
);

/**
 * The Salesforce-shaped source (infra/postgres/salesforce.sql): one row per object, field → clean
 * field, picklist maps and the 18-character Id → id rule. There is no client column; a row whose
 * `isdeleted` turns true is a delete. Owner ids, audit fields and auto-number names of transaction
 * objects never reach a clean record; the event time of a transaction is its `createddate`.
 */
export const salesforceMapping: SourceMapping = {
  source: 'salesforce',
  tables: [
    {
      table: 'farm__c',
      entity: 'farm',
      key: ['id'],
      deletedFlag: 'isdeleted',
      fields: {
        name: { column: 'name' },
        farm_type: { column: 'farm_type__c', codes: farmTypes },
        zone: { column: 'zone__c' },
        owner: { column: 'owner_name__c', optional: true },
      },
    },
    {
      table: 'coop__c',
      entity: 'coop',
      key: ['id'],
      deletedFlag: 'isdeleted',
      fields: {
        name: { column: 'name' },
        farm_id: { ref: 'farm__c', columns: ['farm__c'] },
        capacity: { int: 'capacity__c' },
        coop_type: { column: 'coop_type__c', codes: coopTypes },
      },
    },
    {
      table: 'hen__c',
      entity: 'hen',
      key: ['id'],
      deletedFlag: 'isdeleted',
      fields: {
        name: { column: 'name' },
        coop_id: { ref: 'coop__c', columns: ['coop__c'] },
        breed: { column: 'breed__c', codes: breeds },
        dob: { date: 'date_of_birth__c', optional: true },
        status: { column: 'status__c', codes: henStatuses },
      },
    },
    {
      table: 'storage_container__c',
      entity: 'container',
      key: ['id'],
      deletedFlag: 'isdeleted',
      fields: {
        name: { column: 'name' },
        container_type: { column: 'container_type__c', codes: containerTypes },
        capacity: { int: 'capacity__c' },
        zone: { column: 'zone__c' },
      },
    },
    {
      table: 'consumer_account__c',
      entity: 'consumer',
      key: ['id'],
      deletedFlag: 'isdeleted',
      fields: {
        name: { column: 'name' },
        consumer_type: { column: 'consumer_type__c', codes: consumerTypes },
        zone: { column: 'zone__c' },
        weekly_demand: { int: 'weekly_demand__c', optional: true },
      },
    },
    {
      table: 'lay_report__c',
      entity: 'lay_report',
      key: ['id'],
      deletedFlag: 'isdeleted',
      fields: {
        hen_id: { ref: 'hen__c', columns: ['hen__c'] },
        coop_id: { via: 'hen_id', field: 'coop_id' },
        farm_id: { ref: 'farm__c', columns: ['farm__c'] },
        eggs: { int: 'egg_count__c' },
        timestamp: { instant: ['createddate'] },
        quality: { column: 'quality__c', codes: qualities, optional: true },
      },
    },
    {
      table: 'storage_deposit__c',
      entity: 'storage_deposit',
      key: ['id'],
      deletedFlag: 'isdeleted',
      fields: {
        container_id: { ref: 'storage_container__c', columns: ['container__c'] },
        source_type: { column: 'source_type__c', codes: depositSources },
        source_id: {
          ref: { Farm: 'farm__c', Transfer: 'storage_container__c' },
          by: 'source_type__c',
          columns: ['source_id__c'],
        },
        eggs: { int: 'egg_count__c' },
        timestamp: { instant: ['createddate'] },
      },
    },
    {
      table: 'storage_withdrawal__c',
      entity: 'storage_withdrawal',
      key: ['id'],
      deletedFlag: 'isdeleted',
      fields: {
        container_id: { ref: 'storage_container__c', columns: ['container__c'] },
        reason: { column: 'reason__c', codes: withdrawalReasons },
        eggs: { int: 'egg_count__c' },
        timestamp: { instant: ['createddate'] },
      },
    },
    {
      table: 'container_transfer__c',
      entity: 'container_transfer',
      key: ['id'],
      deletedFlag: 'isdeleted',
      fields: {
        source_container_id: { ref: 'storage_container__c', columns: ['source_container__c'] },
        dest_container_id: { ref: 'storage_container__c', columns: ['dest_container__c'] },
        eggs: { int: 'egg_count__c' },
        timestamp: { instant: ['createddate'] },
      },
    },
    {
      table: 'consumption_report__c',
      entity: 'consumption_report',
      key: ['id'],
      deletedFlag: 'isdeleted',
      fields: {
        consumer_id: { ref: 'consumer_account__c', columns: ['consumer__c'] },
        container_id: { ref: 'storage_container__c', columns: ['container__c'] },
        eggs: { int: 'egg_count__c' },
        timestamp: { instant: ['createddate'] },
        purpose: { column: 'purpose__c', codes: purposes, optional: true },
      },
    },
  ],
};
