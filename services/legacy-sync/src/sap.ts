import type { SourceMapping } from './mapping.js';

const farmTypes = { M: 'megafarm', L: 'local_farm', H: 'homestead' };
const henStatuses = { A: 'active', R: 'retired', D: 'deceased' };
const containerTypes = { W: 'warehouse', M: 'market_shelf', F: 'fridge' };
const consumerTypes = { H: 'household', R: 'restaurant', B: 'bakery' };
const qualities = { A: 'grade_a', B: 'grade_b', C: 'cracked', D: 'double_yolk' };
const depositSources = { F: 'farm', T: 'transfer' };
const withdrawalReasons = { S: 'spoilage', B: 'breakage', Q: 'quality_check' };
const purposes = { C: 'cooking', B: 'baking', R: 'resale', W: 'raw' };
const breeds = {
  RIR: 'Rhode Island Red',
  LEG: 'Leghorn',
  ORP: 'Buff Orpington',
  SUS: 'Sussex',
  PLY: 'Plymouth Rock',
  AUS: 'Australorp',
};
const coopTypes = { STD: 'standard', MOB: 'mobile', FRE: 'free_range', BAT: 'barn' };

/**
 * The SAP-shaped source (infra/postgres/sap.sql): one row per table, column → field, code maps and
 * key → id rules. Client 100 is production; MANDT, the admin columns, BUKRS and the storage location
 * never reach a clean record.
 */
export const sapMapping: SourceMapping = {
  source: 'sap',
  client: { column: 'mandt', value: '100' },
  tables: [
    {
      table: 'zfarm_mstr',
      entity: 'farm',
      key: ['werks'],
      fields: {
        name: { column: 'farm_nm' },
        farm_type: { column: 'farm_typ_cd', codes: farmTypes },
        zone: { column: 'zone_cd' },
        owner: { column: 'eigr', optional: true },
      },
    },
    {
      table: 'zstall_mstr',
      entity: 'coop',
      key: ['stall_nr'],
      fields: {
        name: { column: 'stall_nm' },
        farm_id: { ref: 'zfarm_mstr', columns: ['werks'] },
        capacity: { int: 'kapzt' },
        coop_type: { column: 'stall_typ_cd', codes: coopTypes },
      },
    },
    {
      table: 'zequi_hen',
      entity: 'hen',
      key: ['equnr'],
      fields: {
        name: { column: 'henne_nm' },
        coop_id: { ref: 'zstall_mstr', columns: ['stall_nr'] },
        breed: { column: 'rasse_cd', codes: breeds },
        dob: { date: 'geb_dt', optional: true },
        status: { column: 'stat_cd', codes: henStatuses },
      },
    },
    {
      table: 'zbehaelt_mstr',
      entity: 'container',
      key: ['behaelt_nr'],
      fields: {
        name: { column: 'behaelt_nm' },
        container_type: { column: 'behaelt_typ_cd', codes: containerTypes },
        capacity: { int: 'kapzt' },
        zone: { column: 'zone_cd' },
      },
    },
    {
      table: 'zkunde_vbr',
      entity: 'consumer',
      key: ['kunnr'],
      fields: {
        name: { column: 'kund_nm' },
        consumer_type: { column: 'vbr_typ_cd', codes: consumerTypes },
        zone: { column: 'zone_cd' },
        weekly_demand: { int: 'woch_bedarf', optional: true },
      },
    },
    {
      table: 'zafru_lege',
      entity: 'lay_report',
      key: ['aufnr'],
      fields: {
        hen_id: { ref: 'zequi_hen', columns: ['equnr'] },
        coop_id: { via: 'hen_id', field: 'coop_id' },
        farm_id: { ref: 'zfarm_mstr', columns: ['werks'] },
        eggs: { int: 'ei_menge' },
        timestamp: { instant: ['erfas_dt', 'erfas_zt'] },
        quality: { column: 'qual_cd', codes: qualities, optional: true },
      },
    },
    {
      table: 'zmseg_101',
      entity: 'storage_deposit',
      key: ['mblnr', 'mjahr'],
      fields: {
        container_id: { ref: 'zbehaelt_mstr', columns: ['behaelt_nr'] },
        source_type: { column: 'quell_typ_cd', codes: depositSources },
        source_id: {
          ref: { F: 'zfarm_mstr', T: 'zbehaelt_mstr' },
          by: 'quell_typ_cd',
          columns: ['quell_nr'],
        },
        eggs: { int: 'ei_menge' },
        timestamp: { instant: ['budat', 'cputm'] },
      },
    },
    {
      table: 'zmseg_201',
      entity: 'storage_withdrawal',
      key: ['mblnr', 'mjahr'],
      fields: {
        container_id: { ref: 'zbehaelt_mstr', columns: ['behaelt_nr'] },
        reason: { column: 'grund_cd', codes: withdrawalReasons },
        eggs: { int: 'ei_menge' },
        timestamp: { instant: ['budat', 'cputm'] },
      },
    },
    {
      table: 'zmseg_301',
      entity: 'container_transfer',
      key: ['mblnr', 'mjahr'],
      fields: {
        source_container_id: { ref: 'zbehaelt_mstr', columns: ['quell_beh_nr'] },
        dest_container_id: { ref: 'zbehaelt_mstr', columns: ['ziel_beh_nr'] },
        eggs: { int: 'ei_menge' },
        timestamp: { instant: ['budat', 'cputm'] },
      },
    },
    {
      table: 'zmseg_261',
      entity: 'consumption_report',
      key: ['mblnr', 'mjahr'],
      fields: {
        consumer_id: { ref: 'zkunde_vbr', columns: ['kunnr'] },
        container_id: { ref: 'zbehaelt_mstr', columns: ['behaelt_nr'] },
        eggs: { int: 'ei_menge' },
        timestamp: { instant: ['budat', 'cputm'] },
        purpose: { column: 'zweck_cd', codes: purposes, optional: true },
      },
    },
  ],
};
