import type { ClientSession, Db } from 'mongodb';

/** The collection reads the adapter's readers issue, with the index of their options argument. */
const READS: Readonly<Record<string, number>> = { find: 1, findOne: 1, aggregate: 1, countDocuments: 1 };

/**
 * `db` with every collection read (`find`, `findOne`, `aggregate`, `countDocuments`) sent in `session`,
 * so the readers written against a `Db` read through one causally consistent session unchanged. Writes
 * (a projection read finishing a pending batch) go as before, outside the session.
 */
export function sessionDb(db: Db, session: ClientSession): Db {
  return new Proxy(db, {
    get(target, key, receiver) {
      if (key !== 'collection') return Reflect.get(target, key, receiver);
      return (name: string) =>
        new Proxy(target.collection(name), {
          get(collection, method, inner) {
            const value: unknown = Reflect.get(collection, method, inner);
            const at = typeof method === 'string' ? READS[method] : undefined;
            if (at === undefined || typeof value !== 'function') return value;
            return (...args: unknown[]) => {
              const options = (args[at] ?? {}) as Record<string, unknown>;
              const withSession = [...args];
              withSession[at] = { ...options, session };
              return value.apply(collection, withSession);
            };
          },
        });
    },
  });
}
