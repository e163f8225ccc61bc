import type { EntityName, FilterQuery } from '@eggmesh/schema';

const camel = (snake: string): string => snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

const plural = (word: string): string => (/[^aeiou]y$/.test(word) ? `${word.slice(0, -1)}ies` : `${word}s`);

/** Root field names of one entity in the unified schema. */
export interface UnifiedNames {
  /** By id, e.g. `farm`. */
  readonly single: string;
  /** All rows, e.g. `farms`. */
  readonly list: string;
  /** The connection with filter, order, cursor and count, e.g. `farmsConnection`. */
  readonly connection: string;
  /** The aggregate of an event, e.g. `layReportsAggregate`. */
  readonly aggregate: string;
  /** One per `getBy…` filter, e.g. `getByZone` → `farmsByZone`. */
  readonly filters: ReadonlyMap<string, string>;
}

export function unifiedNames(entity: EntityName, filters: readonly FilterQuery[]): UnifiedNames {
  const single = camel(entity);
  const list = plural(single);
  return {
    single,
    list,
    connection: `${list}Connection`,
    aggregate: `${list}Aggregate`,
    filters: new Map(filters.map((f) => [f.query, `${list}${f.query.replace(/^get/, '')}`])),
  };
}
