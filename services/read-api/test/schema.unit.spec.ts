import { entities, entityNames, relations } from '@eggmesh/schema';
// graphql's CommonJS build, as the app loads it (see src/graphql/runtime.ts).
import { buildSchema, type GraphQLObjectType, getNamedType } from 'graphql/index.js';
import { describe, expect, it } from 'vitest';
import { entitySdl, unifiedNames, unifiedSdl } from '../src/index.js';

const limits = { defaultLimit: 1000, maxLimit: 10_000 };

describe('the unified schema', () => {
  const schema = buildSchema(
    unifiedSdl(limits, { maxDepth: 8, maxCost: 5000, maxFields: 2000, maxRows: 100_000 }),
  );
  const query = schema.getQueryType()!;

  it('has these root fields, the MeshQL-style ones, a connection per entity and an aggregate per event', () => {
    expect(Object.keys(query.getFields())).toEqual([
      'farm',
      'farms',
      'farmsConnection',
      'farmsByZone',
      'coop',
      'coops',
      'coopsConnection',
      'coopsByFarm',
      'hen',
      'hens',
      'hensConnection',
      'hensByCoop',
      'container',
      'containers',
      'containersConnection',
      'containersByZone',
      'consumer',
      'consumers',
      'consumersConnection',
      'consumersByZone',
      'layReport',
      'layReports',
      'layReportsConnection',
      'layReportsAggregate',
      'layReportsByHen',
      'layReportsByFarm',
      'storageDeposit',
      'storageDeposits',
      'storageDepositsConnection',
      'storageDepositsAggregate',
      'storageDepositsByContainer',
      'storageWithdrawal',
      'storageWithdrawals',
      'storageWithdrawalsConnection',
      'storageWithdrawalsAggregate',
      'storageWithdrawalsByContainer',
      'containerTransfer',
      'containerTransfers',
      'containerTransfersConnection',
      'containerTransfersAggregate',
      'containerTransfersBySourceContainer',
      'containerTransfersByDestContainer',
      'consumptionReport',
      'consumptionReports',
      'consumptionReportsConnection',
      'consumptionReportsAggregate',
      'consumptionReportsByConsumer',
      'consumptionReportsByContainer',
      'containerInventory',
      'containerInventories',
      'containerInventoriesConnection',
      'containerInventoriesByContainer',
      'henProductivity',
      'henProductivities',
      'henProductivitiesConnection',
      'henProductivitiesByHen',
      'farmOutput',
      'farmOutputs',
      'farmOutputsConnection',
      'farmOutputsByFarm',
    ]);
  });

  it('gives every list root field at, limit and after, and documents the limits', () => {
    for (const field of Object.values(query.getFields())) {
      const args = field.args.map((a) => a.name);
      expect(args).toContain('at');
      if (String(field.type).startsWith('[') && !field.name.endsWith('Aggregate'))
        expect(args).toEqual(expect.arrayContaining(['limit', 'after']));
    }
    expect(query.description).toContain('at most 8 fields deep');
    expect(query.getFields().farms?.description).toContain('default 1000, at most 10000');
  });

  it('declares all 13 types and the 19 relations', () => {
    for (const entity of entityNames) expect(schema.getType(entities[entity].typeName)).toBeDefined();
    for (const r of relations) {
      const type = schema.getType(entities[r.parent].typeName) as GraphQLObjectType;
      const field = type.getFields()[r.field];
      expect(field, `${r.parent}.${r.field}`).toBeDefined();
      expect(getNamedType(field!.type).name).toBe(entities[r.target].typeName);
      expect(String(field!.type)).toBe(
        // Nullable lists: a bad `limit` nulls that list only (bad-arguments.int.spec.ts).
        r.kind === 'list' ? `[${entities[r.target].typeName}!]` : entities[r.target].typeName,
      );
    }
  });

  it('derives field types from the JSON Schema', () => {
    const hen = schema.getType('Hen') as GraphQLObjectType;
    expect(
      Object.fromEntries(Object.entries(hen.getFields()).map(([k, v]) => [k, String(v.type)])),
    ).toMatchObject({
      id: 'ID!',
      name: 'String!',
      coop_id: 'String!',
      dob: 'String',
      status: 'String',
    });
    const inventory = schema.getType('ContainerInventory') as GraphQLObjectType;
    expect(String(inventory.getFields().utilization_pct?.type)).toBe('Float!');
    expect(String(inventory.getFields().current_eggs?.type)).toBe('SafeInt');
    const productivity = schema.getType('HenProductivity') as GraphQLObjectType;
    expect(String(productivity.getFields().farm_id?.type)).toBe('String');
  });

  it('names root fields from the catalogue', () => {
    const names = unifiedNames('container_transfer', entities.container_transfer.filters);
    expect(names.single).toBe('containerTransfer');
    expect(names.list).toBe('containerTransfers');
    expect([...names.filters.values()]).toEqual([
      'containerTransfersBySourceContainer',
      'containerTransfersByDestContainer',
    ]);
  });
});

describe.each(entityNames)('the %s endpoint schema', (entity) => {
  const schema = buildSchema(entitySdl(entity, limits));
  const fields = schema.getQueryType()!.getFields();

  it('has MeshQL query names and argument names, all nullable as in MeshQL', () => {
    const filters = entities[entity].filters;
    expect(Object.keys(fields)).toEqual(['getById', 'getAll', ...filters.map((f) => f.query)]);
    expect(fields.getById?.args.map((a) => `${a.name}: ${a.type}`)).toEqual(['id: ID', 'at: Float']);
    expect(fields.getAll?.args.map((a) => `${a.name}: ${a.type}`)).toEqual([
      'at: Float',
      'limit: Int',
      'after: ID',
    ]);
    for (const filter of filters) {
      expect(fields[filter.query]?.args.map((a) => `${a.name}: ${a.type}`)).toEqual([
        `${filter.argument}: ${filter.argument === 'id' ? 'ID' : 'String'}`,
        'at: Float',
        'limit: Int',
        'after: ID',
      ]);
    }
  });

  it('declares full related types with their relation fields', () => {
    for (const r of relations.filter((x) => schema.getType(entities[x.parent].typeName))) {
      const type = schema.getType(entities[r.parent].typeName) as GraphQLObjectType;
      expect(type.getFields()[r.field], `${r.parent}.${r.field}`).toBeDefined();
    }
  });
});
