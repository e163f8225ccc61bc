// The schemas and the catalogue against domain.md §1 and §3, written out here by hand.
import {
  type Consumer,
  type ConsumptionReport,
  type Container,
  type ContainerInventory,
  type ContainerTransfer,
  type Coop,
  type EntityName,
  entities,
  entityNames,
  type Farm,
  type FarmOutput,
  type Hen,
  type HenProductivity,
  isEntityName,
  jsonSchemaOf,
  type LayReport,
  relations,
  relationsOf,
  type StorageDeposit,
  type StorageWithdrawal,
} from '@eggmesh/schema';
import { describe, expect, expectTypeOf, it } from 'vitest';

const U = {
  a: '3f2b8c1e-9d4a-4b6e-8f1a-2c3d4e5f6a7b',
  b: '7a6f5e4d-3c2b-4a19-8e7d-6c5b4a3f2e1d',
  c: 'b1c2d3e4-f5a6-4b7c-9d8e-0f1a2b3c4d5e',
};
const TS = '2026-02-20T06:30:00Z';

type Kind = 'actor' | 'event' | 'projection';
type Spec = {
  kind: Kind;
  typeName: string;
  /** domain.md §1: FK field → target. */
  fks: Record<string, EntityName>;
  /** domain.md §3: query → filtered field (argument `zone` for getByZone, `id` otherwise). */
  filters: Record<string, string>;
  required: string[];
  optional: string[];
  enums: Record<string, string[]>;
  sample: Record<string, unknown>;
};

/** domain.md §1 and §3 as a table. */
const domain: Record<EntityName, Spec> = {
  farm: {
    kind: 'actor',
    typeName: 'Farm',
    fks: {},
    filters: { getByZone: 'zone' },
    required: ['name', 'farm_type', 'zone'],
    optional: ['owner'],
    enums: { farm_type: ['megafarm', 'local_farm', 'homestead'] },
    sample: { name: 'Green Acres', farm_type: 'megafarm', zone: 'north', owner: 'Ada' },
  },
  coop: {
    kind: 'actor',
    typeName: 'Coop',
    fks: { farm_id: 'farm' },
    filters: { getByFarm: 'farm_id' },
    required: ['name', 'farm_id', 'capacity', 'coop_type'],
    optional: [],
    enums: {},
    sample: { name: 'Coop 1', farm_id: U.a, capacity: 1, coop_type: 'barn' },
  },
  hen: {
    kind: 'actor',
    typeName: 'Hen',
    fks: { coop_id: 'coop' },
    filters: { getByCoop: 'coop_id' },
    required: ['name', 'coop_id', 'breed'],
    optional: ['dob', 'status'],
    enums: { status: ['active', 'retired', 'deceased'] },
    sample: { name: 'Henrietta', coop_id: U.a, breed: 'sussex', dob: '2024-02-29', status: 'retired' },
  },
  container: {
    kind: 'actor',
    typeName: 'Container',
    fks: {},
    filters: { getByZone: 'zone' },
    required: ['name', 'container_type', 'capacity', 'zone'],
    optional: [],
    enums: { container_type: ['warehouse', 'market_shelf', 'fridge'] },
    sample: { name: 'Cold room', container_type: 'warehouse', capacity: 5000, zone: 'central' },
  },
  consumer: {
    kind: 'actor',
    typeName: 'Consumer',
    fks: {},
    filters: { getByZone: 'zone' },
    required: ['name', 'consumer_type', 'zone'],
    optional: ['weekly_demand'],
    enums: { consumer_type: ['household', 'restaurant', 'bakery'] },
    sample: { name: 'Chez Oeuf', consumer_type: 'restaurant', zone: 'west', weekly_demand: 0 },
  },
  lay_report: {
    kind: 'event',
    typeName: 'LayReport',
    fks: { hen_id: 'hen', coop_id: 'coop', farm_id: 'farm' },
    filters: { getByHen: 'hen_id', getByFarm: 'farm_id' },
    required: ['hen_id', 'coop_id', 'farm_id', 'eggs', 'timestamp'],
    optional: ['quality'],
    enums: { quality: ['grade_a', 'grade_b', 'cracked', 'double_yolk'] },
    sample: { hen_id: U.a, coop_id: U.b, farm_id: U.c, eggs: 0, timestamp: TS, quality: 'double_yolk' },
  },
  storage_deposit: {
    kind: 'event',
    typeName: 'StorageDeposit',
    fks: { container_id: 'container' },
    filters: { getByContainer: 'container_id' },
    required: ['container_id', 'source_type', 'source_id', 'eggs', 'timestamp'],
    optional: [],
    enums: { source_type: ['farm', 'transfer'] },
    sample: { container_id: U.a, source_type: 'transfer', source_id: U.b, eggs: 1, timestamp: TS },
  },
  storage_withdrawal: {
    kind: 'event',
    typeName: 'StorageWithdrawal',
    fks: { container_id: 'container' },
    filters: { getByContainer: 'container_id' },
    required: ['container_id', 'reason', 'eggs', 'timestamp'],
    optional: [],
    enums: { reason: ['spoilage', 'breakage', 'quality_check'] },
    sample: { container_id: U.a, reason: 'quality_check', eggs: 3, timestamp: '2026-02-20T06:30:00.5+02:00' },
  },
  container_transfer: {
    kind: 'event',
    typeName: 'ContainerTransfer',
    fks: { source_container_id: 'container', dest_container_id: 'container' },
    filters: { getBySourceContainer: 'source_container_id', getByDestContainer: 'dest_container_id' },
    required: ['source_container_id', 'dest_container_id', 'eggs', 'timestamp'],
    optional: ['transport_method'],
    enums: { transport_method: ['truck', 'van', 'cart'] },
    sample: {
      source_container_id: U.a,
      dest_container_id: U.b,
      eggs: 12,
      timestamp: TS,
      transport_method: 'cart',
    },
  },
  consumption_report: {
    kind: 'event',
    typeName: 'ConsumptionReport',
    fks: { consumer_id: 'consumer', container_id: 'container' },
    filters: { getByConsumer: 'consumer_id', getByContainer: 'container_id' },
    required: ['consumer_id', 'container_id', 'eggs', 'timestamp'],
    optional: ['purpose'],
    enums: { purpose: ['cooking', 'baking', 'resale', 'raw'] },
    sample: { consumer_id: U.a, container_id: U.b, eggs: 6, timestamp: TS, purpose: 'raw' },
  },
  container_inventory: {
    kind: 'projection',
    typeName: 'ContainerInventory',
    fks: { container_id: 'container' },
    filters: { getByContainer: 'container_id' },
    required: [
      'container_id',
      'current_eggs',
      'total_deposits',
      'total_withdrawals',
      'total_transfers_in',
      'total_transfers_out',
      'total_consumed',
      'utilization_pct',
    ],
    optional: [],
    enums: {},
    sample: {
      id: U.a,
      container_id: U.a,
      current_eggs: 40,
      total_deposits: 50,
      total_withdrawals: 2,
      total_transfers_in: 0,
      total_transfers_out: 3,
      total_consumed: 5,
      utilization_pct: 100,
    },
  },
  hen_productivity: {
    kind: 'projection',
    typeName: 'HenProductivity',
    fks: { hen_id: 'hen' },
    filters: { getByHen: 'hen_id' },
    required: [
      'hen_id',
      'farm_id',
      'eggs_today',
      'eggs_week',
      'eggs_month',
      'total_eggs',
      'avg_per_week',
      'quality_rate',
    ],
    optional: [],
    enums: {},
    sample: {
      id: U.a,
      hen_id: U.a,
      farm_id: U.b,
      eggs_today: 1,
      eggs_week: 6,
      eggs_month: 25,
      total_eggs: 300,
      avg_per_week: 5.75,
      quality_rate: 0.9,
    },
  },
  farm_output: {
    kind: 'projection',
    typeName: 'FarmOutput',
    fks: { farm_id: 'farm' },
    filters: { getByFarm: 'farm_id' },
    required: [
      'farm_id',
      'farm_type',
      'eggs_today',
      'eggs_week',
      'eggs_month',
      'active_hens',
      'total_hens',
      'avg_per_hen_per_week',
    ],
    optional: [],
    enums: {},
    sample: {
      id: U.a,
      farm_id: U.a,
      farm_type: 'homestead',
      eggs_today: 3,
      eggs_week: 20,
      eggs_month: 80,
      active_hens: 4,
      total_hens: 5,
      avg_per_hen_per_week: 4.5,
    },
  },
};

/** domain.md §3, "The 19 relations": parent.field, kind, key from parent, target query. */
const domainRelations = [
  ['Farm.coops', 'list', 'id', 'coop.getByFarm'],
  ['Farm.farmOutput', 'list', 'id', 'farm_output.getByFarm'],
  ['Coop.farm', 'single', 'farm_id', 'farm.getById'],
  ['Coop.hens', 'list', 'id', 'hen.getByCoop'],
  ['Hen.coop', 'single', 'coop_id', 'coop.getById'],
  ['Hen.layReports', 'list', 'id', 'lay_report.getByHen'],
  ['Hen.productivity', 'list', 'id', 'hen_productivity.getByHen'],
  ['Container.inventory', 'list', 'id', 'container_inventory.getByContainer'],
  ['Consumer.consumptionReports', 'list', 'id', 'consumption_report.getByConsumer'],
  ['LayReport.hen', 'single', 'hen_id', 'hen.getById'],
  ['StorageDeposit.container', 'single', 'container_id', 'container.getById'],
  ['StorageWithdrawal.container', 'single', 'container_id', 'container.getById'],
  ['ContainerTransfer.sourceContainer', 'single', 'source_container_id', 'container.getById'],
  ['ContainerTransfer.destContainer', 'single', 'dest_container_id', 'container.getById'],
  ['ConsumptionReport.consumer', 'single', 'consumer_id', 'consumer.getById'],
  ['ConsumptionReport.container', 'single', 'container_id', 'container.getById'],
  ['ContainerInventory.container', 'single', 'container_id', 'container.getById'],
  ['HenProductivity.hen', 'single', 'hen_id', 'hen.getById'],
  ['FarmOutput.farm', 'single', 'farm_id', 'farm.getById'],
] as const;

const names = Object.keys(domain) as EntityName[];

/** The paths of the issues a payload raises (empty when it is valid). */
const issuePaths = (name: EntityName, payload: unknown) => {
  const result = entities[name].schema.safeParse(payload);
  return result.success ? [] : result.error.issues.map((i) => i.path.map(String).join('.'));
};
const withField = (name: EntityName, field: string, value: unknown) => ({
  ...domain[name].sample,
  [field]: value,
});
const without = (name: EntityName, field: string) => {
  const copy = { ...domain[name].sample };
  delete copy[field];
  return copy;
};

describe('catalogue', () => {
  it('has the 13 entities of domain.md, 5 actors, 5 events and 3 projections', () => {
    expect([...entityNames].sort()).toEqual([...names].sort());
    expect(Object.keys(entities).sort()).toEqual([...names].sort());
    const count = (kind: Kind) => entityNames.filter((n) => entities[n].kind === kind).length;
    expect([count('actor'), count('event'), count('projection')]).toEqual([5, 5, 3]);
  });

  it.each(names)('%s: kind, type name, FKs, filters and indexes match domain.md', (name) => {
    const def = entities[name];
    const spec = domain[name];
    expect(def.name).toBe(name);
    expect(def.kind).toBe(spec.kind);
    expect(def.typeName).toBe(spec.typeName);
    expect(Object.fromEntries(def.foreignKeys.map((f) => [f.field, f.target]))).toEqual(spec.fks);
    expect(Object.fromEntries(def.filters.map((f) => [f.query, f.field]))).toEqual(spec.filters);
    for (const f of def.filters) expect(f.argument).toBe(f.query === 'getByZone' ? 'zone' : 'id');
    // Every filtered field and every query field is indexed (domain.md §2).
    expect([...def.indexedFields].sort()).toEqual(
      [...new Set([...Object.values(spec.filters), ...Object.keys(def.queryFields)])].sort(),
    );
    // Every `getBy…` field can be queried too, and every query field is a field of the entity, of its kind.
    for (const field of Object.values(spec.filters)) expect(def.queryFields[field]).toBeDefined();
    const properties = jsonSchemaOf(name).properties ?? {};
    for (const [field, kind] of Object.entries(def.queryFields)) {
      const types = JSON.stringify(properties[field]);
      expect(types, `${name}.${field}`).toBeDefined();
      if (kind === 'number') expect(types).toMatch(/"(integer|number)"/);
      else expect(types).toMatch(/"string"/);
      if (kind === 'timestamp') expect(types).toContain('date-time');
      if (kind === 'enum') expect(types).toContain('"enum"');
    }
    if (spec.kind === 'projection') expect(def.projectionKey).toBe(Object.keys(spec.fks)[0]);
    else expect(def.projectionKey).toBeUndefined();
  });

  it('has exactly the 19 relations of domain.md §3', () => {
    const typeOf = (n: EntityName) => entities[n].typeName;
    const actual = relations.map((r) => {
      const target =
        r.kind === 'single'
          ? `${r.target}.getById`
          : `${r.target}.${entities[r.target].filters.find((f) => f.field === r.targetField)?.query}`;
      return [`${typeOf(r.parent)}.${r.field}`, r.kind, r.parentField, target];
    });
    expect(relations).toHaveLength(19);
    expect(actual).toEqual(domainRelations.map((r) => [...r]));
    for (const r of relations) {
      // Singletons follow an FK to the target's id; lists find the targets whose field points back.
      if (r.kind === 'single') {
        expect(r.targetField).toBe('id');
        expect(entities[r.parent].foreignKeys).toContainEqual({ field: r.parentField, target: r.target });
      } else {
        expect(r.parentField).toBe('id');
        expect(entities[r.target].foreignKeys).toContainEqual({ field: r.targetField, target: r.parent });
      }
    }
  });

  it('relationsOf and isEntityName', () => {
    expect(relationsOf('farm').map((r) => r.field)).toEqual(['coops', 'farmOutput']);
    expect(relationsOf('container_transfer').map((r) => r.field)).toEqual([
      'sourceContainer',
      'destContainer',
    ]);
    expect(names.reduce((n, name) => n + relationsOf(name).length, 0)).toBe(19);
    for (const name of names) expect(isEntityName(name)).toBe(true);
    for (const other of ['chicken', 'Farm', 'toString', '__proto__', 'constructor', '']) {
      expect(isEntityName(other)).toBe(false);
    }
  });

  it('is frozen', () => {
    expect(Object.isFrozen(entities)).toBe(true);
    expect(Object.isFrozen(entities.farm)).toBe(true);
    expect(Object.isFrozen(relations)).toBe(true);
  });
});

describe.each(names)('%s schema', (name) => {
  const spec = domain[name];
  const schema = entities[name].schema;

  it('accepts the sample, with and without an id, and the required fields alone', () => {
    expect(issuePaths(name, spec.sample)).toEqual([]);
    if (spec.kind !== 'projection') {
      expect(issuePaths(name, { ...spec.sample, id: U.c })).toEqual([]);
      const minimal = Object.fromEntries(spec.required.map((f) => [f, spec.sample[f]]));
      expect(issuePaths(name, minimal)).toEqual([]);
    }
    // The parsed value is the payload itself: nothing added, nothing coerced.
    expect(schema.parse(spec.sample)).toEqual(spec.sample);
  });

  it.each(spec.required)('requires %s', (field) => {
    expect(issuePaths(name, without(name, field))).toContain(field);
  });

  it('has no other required fields', () => {
    for (const field of spec.optional) expect(issuePaths(name, without(name, field))).toEqual([]);
    const keys = Object.keys(spec.sample).filter((k) => k !== 'id');
    expect(keys.sort()).toEqual([...spec.required, ...spec.optional].sort());
  });

  it('rejects unknown properties', () => {
    expect(issuePaths(name, { ...spec.sample, colour: 'brown' })).toHaveLength(1);
    expect(schema.safeParse({ ...spec.sample, colour: 'brown' }).error?.issues[0]?.code).toBe(
      'unrecognized_keys',
    );
    expect(issuePaths(name, { ...spec.sample, Name: 'x' })).toHaveLength(1);
  });

  it('rejects non-objects', () => {
    for (const value of [null, undefined, 'x', 3, [], [spec.sample]])
      expect(issuePaths(name, value)).toEqual(['']);
  });

  it('closes its enums', () => {
    for (const [field, values] of Object.entries(spec.enums)) {
      for (const value of values) expect(issuePaths(name, withField(name, field, value))).toEqual([]);
      for (const value of ['other', values[0]!.toUpperCase(), '', ` ${values[0]}`, null, 1]) {
        expect(issuePaths(name, withField(name, field, value)), `${field}=${value}`).toEqual([field]);
      }
    }
  });

  it('takes only UUIDs in FK and id fields', () => {
    const idFields = [...Object.keys(spec.fks), 'id'];
    if (name === 'storage_deposit') idFields.push('source_id');
    for (const field of idFields) {
      for (const value of ['abc', '', '3f2b8c1e9d4a4b6e8f1a2c3d4e5f6a7b', `${U.a}0`, 42, null]) {
        expect(issuePaths(name, withField(name, field, value)), `${field}=${value}`).toEqual([field]);
      }
    }
  });
});

describe('field rules of domain.md §1', () => {
  const bad = (name: EntityName, field: string, values: unknown[]) => {
    for (const value of values) {
      expect(
        issuePaths(name, withField(name, field, value)),
        `${name}.${field}=${JSON.stringify(value)}`,
      ).toEqual([field]);
    }
  };
  const good = (name: EntityName, field: string, values: unknown[]) => {
    for (const value of values)
      expect(issuePaths(name, withField(name, field, value)), `${value}`).toEqual([]);
  };

  it('timestamps are ISO-8601 date-times with Z or an offset', () => {
    const events = [
      'lay_report',
      'storage_deposit',
      'storage_withdrawal',
      'container_transfer',
      'consumption_report',
    ];
    for (const name of events as EntityName[]) {
      good(name, 'timestamp', [
        '2026-02-20T06:30:00Z',
        '2026-02-20T06:30:00.123Z',
        '2026-02-20T06:30:00-05:00',
        '2024-02-29T23:59:59+14:00',
      ]);
      bad(name, 'timestamp', [
        '2026-02-20',
        '2026-02-20 06:30:00Z',
        '2026-02-20T06:30:00',
        '2026-02-20T06:30Z',
        '2026-02-30T06:30:00Z',
        '2026-02-20T24:00:00Z',
        'Fri, 20 Feb 2026 06:30:00 GMT',
        'yesterday',
        '',
        1771569000000,
        null,
      ]);
    }
  });

  it('dob is a real calendar date YYYY-MM-DD', () => {
    good('hen', 'dob', ['2024-02-29', '2025-12-31', '2025-01-01']);
    bad('hen', 'dob', [
      '2025-02-29',
      '2025-04-31',
      '2025-13-01',
      '2025/04/01',
      '01-04-2025',
      '2025-4-1',
      '',
      20250401,
    ]);
    bad('hen', 'dob', ['2025-04-01T00:00:00Z']);
  });

  it('counts are integers in their ranges', () => {
    bad('coop', 'capacity', [0, -1, 1.5, '10', null]);
    bad('container', 'capacity', [0, -10, 2.5]);
    good('consumer', 'weekly_demand', [0, 1, 700]);
    bad('consumer', 'weekly_demand', [-1, 0.5, '3']);
    good('lay_report', 'eggs', [0, 1, 12]);
    bad('lay_report', 'eggs', [-1, 1.5, '2', Number.NaN, Number.POSITIVE_INFINITY]);
    for (const name of [
      'storage_deposit',
      'storage_withdrawal',
      'container_transfer',
      'consumption_report',
    ] as const) {
      good(name, 'eggs', [1, 30]);
      bad(name, 'eggs', [0, -1, 2.5, '1']);
    }
  });

  it('required strings are non-empty strings', () => {
    bad('farm', 'name', ['', 5, null]);
    bad('farm', 'zone', ['']);
    bad('hen', 'breed', ['', ['leghorn']]);
    bad('coop', 'coop_type', ['']);
    good('farm', 'owner', ['', 'Ada']);
  });

  it('text holds no NUL and no lone surrogate; a required one is not only white space', () => {
    for (const [name, field] of [
      ['farm', 'name'],
      ['farm', 'zone'],
      ['hen', 'breed'],
      ['coop', 'coop_type'],
      ['container', 'name'],
      ['consumer', 'name'],
    ] as const) {
      bad(name, field, ['   ', '\t\n', 'Sunny\u0000Acres', '\u0000', 'a\uD800', '\uDC00b', 'x\uDBFF']);
      good(name, field, ['Sunny Acres', ' padded ', 'Ferme du Soleil \u00e9\u{1F95A}', '\uD83E\uDD5A']);
    }
    bad('farm', 'owner', ['Ann\u0000', '\uD800']);
    const res = entities.farm.schema.safeParse({ name: ' ', farm_type: 'local_farm', zone: 'north' });
    expect(res.success).toBe(false);
    expect(res.error?.issues[0]?.message).toBe('must not be empty or only white space');
  });

  it('years are sane: timestamps from 1900 (the write side bounds the future), a dob from 1900 to 2099', () => {
    for (const name of ['lay_report', 'storage_deposit', 'consumption_report'] as const) {
      bad(name, 'timestamp', ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '1899-12-31T23:59:59Z']);
      good(name, 'timestamp', ['1900-01-01T00:00:00Z', '2026-02-20T06:30:00Z']);
    }
    // A pattern the API document states (a year from 1900 to 2099), so schema-driven clients generate valid ones.
    bad('hen', 'dob', ['0000-01-01', '1899-12-31', '9999-12-31', '2100-01-01']);
    good('hen', 'dob', ['1900-01-01', '2024-02-29', '2099-12-31']);
  });

  it('optional fields may be left out but not set to null', () => {
    bad('farm', 'owner', [null, 3]);
    bad('hen', 'status', [null]);
    bad('hen', 'dob', [null]);
  });

  it('a transfer needs two different containers', () => {
    const result = entities.container_transfer.schema.safeParse(
      withField('container_transfer', 'dest_container_id', U.a),
    );
    expect(result.success).toBe(false);
    expect(result.error!.issues).toHaveLength(1);
    expect(result.error!.issues[0]!.path).toEqual(['dest_container_id']);
    expect(result.error!.issues[0]!.message).toMatch(/different/);
  });

  it('projection documents keep their numbers in range', () => {
    good('container_inventory', 'utilization_pct', [0, 12.5, 100]);
    bad('container_inventory', 'utilization_pct', [-0.1, 100.01, '50']);
    bad('container_inventory', 'current_eggs', [-1, 1.5]);
    good('hen_productivity', 'quality_rate', [0, 0.5, 1]);
    bad('hen_productivity', 'quality_rate', [-0.01, 1.01]);
    bad('hen_productivity', 'avg_per_week', [-1]);
    good('hen_productivity', 'avg_per_week', [0, 0.25]);
    good('hen_productivity', 'farm_id', [null]);
    bad('farm_output', 'active_hens', [-1, 0.5]);
    bad('farm_output', 'avg_per_hen_per_week', [-0.5]);
    // A projection document always carries its id.
    for (const name of names.filter((n) => domain[n].kind === 'projection')) {
      expect(issuePaths(name, without(name, 'id'))).toEqual(['id']);
    }
  });
});

describe('jsonSchemaOf', () => {
  it.each(names)('%s: an object schema with the fields, required list and enums of domain.md', (name) => {
    const spec = domain[name];
    const input = jsonSchemaOf(name, 'input');
    const record = jsonSchemaOf(name, 'record');
    const byDefault = jsonSchemaOf(name);
    expect(byDefault).toEqual(record);
    for (const schema of [input, record]) {
      expect(schema.type).toBe('object');
      expect(schema.additionalProperties).toBe(false);
      expect(schema.$schema).toBeUndefined();
      expect(Object.keys(schema.properties ?? {}).sort()).toEqual(
        ['id', ...spec.required, ...spec.optional].sort(),
      );
      for (const [field, values] of Object.entries(spec.enums))
        expect(schema.properties?.[field]?.enum).toEqual(values);
      for (const fk of Object.keys(spec.fks)) {
        const prop = schema.properties?.[fk] as { format?: string; anyOf?: { format?: string }[] };
        expect(prop.format ?? prop.anyOf?.[0]?.format).toBe('uuid');
      }
      expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
    }
    expect([...(record.required ?? [])].sort()).toEqual(['id', ...spec.required].sort());
    if (spec.kind === 'projection') {
      expect([...(input.required ?? [])].sort()).toEqual(['id', ...spec.required].sort());
    } else {
      expect([...(input.required ?? [])].sort()).toEqual([...spec.required].sort());
    }
    if ('timestamp' in spec.sample) expect(record.properties?.timestamp?.format).toBe('date-time');
    if (name === 'hen') expect(record.properties?.dob?.format).toBe('date');
  });

  it('describes integer counts with their minimums', () => {
    expect(jsonSchemaOf('coop').properties?.capacity).toMatchObject({ type: 'integer', minimum: 1 });
    expect(jsonSchemaOf('lay_report').properties?.eggs).toMatchObject({ type: 'integer', minimum: 0 });
    expect(jsonSchemaOf('storage_deposit').properties?.eggs).toMatchObject({ type: 'integer', minimum: 1 });
    expect(jsonSchemaOf('container_inventory').properties?.utilization_pct).toMatchObject({
      type: 'number',
      minimum: 0,
      maximum: 100,
    });
  });
});

describe('integer ranges: one range per field everywhere', () => {
  const INT32 = 2_147_483_647;
  const entityInts: [EntityName, string, number][] = [
    ['coop', 'capacity', 1],
    ['container', 'capacity', 1],
    ['consumer', 'weekly_demand', 0],
    ['lay_report', 'eggs', 0],
    ['storage_deposit', 'eggs', 1],
    ['storage_withdrawal', 'eggs', 1],
    ['container_transfer', 'eggs', 1],
    ['consumption_report', 'eggs', 1],
  ];

  it.each(entityInts)('%s.%s is an integer from its minimum to 2^31-1 (GraphQL Int)', (name, field, min) => {
    for (const mode of ['input', 'record'] as const) {
      expect(jsonSchemaOf(name, mode).properties?.[field]).toMatchObject({
        type: 'integer',
        minimum: min,
        maximum: INT32,
      });
    }
    const schema = entities[name].schema;
    const sample = domain[name].sample;
    expect(schema.safeParse({ ...sample, [field]: INT32 }).success).toBe(true);
    expect(schema.safeParse({ ...sample, [field]: INT32 + 1 }).success).toBe(false);
    expect(schema.safeParse({ ...sample, [field]: min - 1 }).success).toBe(false);
  });

  it('every integer of a client-written entity is bounded by 2^31-1', () => {
    for (const name of names.filter((n) => entities[n].kind !== 'projection')) {
      for (const [field, prop] of Object.entries(jsonSchemaOf(name, 'input').properties ?? {})) {
        if (prop.type === 'integer') expect(prop.maximum, `${name}.${field}`).toBe(INT32);
      }
    }
  });

  it('projection counters are exact integers from 0 to 2^53-1 (SafeInt)', () => {
    for (const name of names.filter((n) => entities[n].kind === 'projection')) {
      const ints = Object.entries(jsonSchemaOf(name).properties ?? {}).filter(
        ([, p]) => p.type === 'integer',
      );
      expect(ints.length, name).toBeGreaterThan(0);
      for (const [field, prop] of ints) {
        expect(prop, `${name}.${field}`).toMatchObject({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
      }
    }
  });
});

describe('inferred types', () => {
  it('actors', () => {
    expectTypeOf<Farm>().toEqualTypeOf<{
      id?: string;
      name: string;
      farm_type: 'megafarm' | 'local_farm' | 'homestead';
      zone: string;
      owner?: string;
    }>();
    expectTypeOf<Coop>().toEqualTypeOf<{
      id?: string;
      name: string;
      farm_id: string;
      capacity: number;
      coop_type: string;
    }>();
    expectTypeOf<Hen>().toEqualTypeOf<{
      id?: string;
      name: string;
      coop_id: string;
      breed: string;
      dob?: string;
      status?: 'active' | 'retired' | 'deceased';
    }>();
    expectTypeOf<Container>().toEqualTypeOf<{
      id?: string;
      name: string;
      container_type: 'warehouse' | 'market_shelf' | 'fridge';
      capacity: number;
      zone: string;
    }>();
    expectTypeOf<Consumer>().toEqualTypeOf<{
      id?: string;
      name: string;
      consumer_type: 'household' | 'restaurant' | 'bakery';
      zone: string;
      weekly_demand?: number;
    }>();
  });

  it('events', () => {
    expectTypeOf<LayReport>().toEqualTypeOf<{
      id?: string;
      hen_id: string;
      coop_id: string;
      farm_id: string;
      eggs: number;
      timestamp: string;
      quality?: 'grade_a' | 'grade_b' | 'cracked' | 'double_yolk';
    }>();
    expectTypeOf<StorageDeposit>().toEqualTypeOf<{
      id?: string;
      container_id: string;
      source_type: 'farm' | 'transfer';
      source_id: string;
      eggs: number;
      timestamp: string;
    }>();
    expectTypeOf<StorageWithdrawal>().toEqualTypeOf<{
      id?: string;
      container_id: string;
      reason: 'spoilage' | 'breakage' | 'quality_check';
      eggs: number;
      timestamp: string;
    }>();
    expectTypeOf<ContainerTransfer>().toEqualTypeOf<{
      id?: string;
      source_container_id: string;
      dest_container_id: string;
      eggs: number;
      timestamp: string;
      transport_method?: 'truck' | 'van' | 'cart';
    }>();
    expectTypeOf<ConsumptionReport>().toEqualTypeOf<{
      id?: string;
      consumer_id: string;
      container_id: string;
      eggs: number;
      timestamp: string;
      purpose?: 'cooking' | 'baking' | 'resale' | 'raw';
    }>();
  });

  it('projections', () => {
    expectTypeOf<ContainerInventory>().toEqualTypeOf<{
      id: string;
      container_id: string;
      current_eggs: number;
      total_deposits: number;
      total_withdrawals: number;
      total_transfers_in: number;
      total_transfers_out: number;
      total_consumed: number;
      utilization_pct: number;
    }>();
    expectTypeOf<HenProductivity>().toEqualTypeOf<{
      id: string;
      hen_id: string;
      farm_id: string | null;
      eggs_today: number;
      eggs_week: number;
      eggs_month: number;
      total_eggs: number;
      avg_per_week: number;
      quality_rate: number;
    }>();
    expectTypeOf<FarmOutput>().toEqualTypeOf<{
      id: string;
      farm_id: string;
      farm_type: string;
      eggs_today: number;
      eggs_week: number;
      eggs_month: number;
      active_hens: number;
      total_hens: number;
      avg_per_hen_per_week: number;
    }>();
  });

  it('catalogue', () => {
    expectTypeOf<EntityName>().toEqualTypeOf<
      | 'farm'
      | 'coop'
      | 'hen'
      | 'container'
      | 'consumer'
      | 'lay_report'
      | 'storage_deposit'
      | 'storage_withdrawal'
      | 'container_transfer'
      | 'consumption_report'
      | 'container_inventory'
      | 'hen_productivity'
      | 'farm_output'
    >();
    expectTypeOf(entities.farm.kind).toEqualTypeOf<'actor' | 'event' | 'projection'>();
    expectTypeOf(relations[0]!.kind).toEqualTypeOf<'single' | 'list'>();
    expectTypeOf(isEntityName).guards.toEqualTypeOf<EntityName>();
  });
});
