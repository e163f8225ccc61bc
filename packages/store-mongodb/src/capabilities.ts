import type { Document } from 'mongodb';

/** How commits are made atomic: one multi-document transaction, or the log-first protocol. */
export type CommitMode = 'transactions' | 'log-first';

/**
 * Whether a deployment runs multi-document transactions, from its `isMaster`/`hello` reply:
 * a replica set member (wire ≥ 7, MongoDB 4.0) or a mongos (wire ≥ 8, MongoDB 4.2) that supports
 * sessions. A standalone server never does, and neither does mongo-java-server (no sessions).
 */
export function supportsTransactions(hello: Document): boolean {
  const sessions = typeof hello.logicalSessionTimeoutMinutes === 'number';
  const wire = typeof hello.maxWireVersion === 'number' ? hello.maxWireVersion : 0;
  const replicaSet = typeof hello.setName === 'string' && wire >= 7;
  const sharded = hello.msg === 'isdbgrid' && wire >= 8;
  return sessions && (replicaSet || sharded);
}

/** The commit mode for a deployment's reply, unless one is forced. */
export function chooseCommitMode(hello: Document, forced: 'auto' | CommitMode = 'auto'): CommitMode {
  if (forced !== 'auto') return forced;
  return supportsTransactions(hello) ? 'transactions' : 'log-first';
}
