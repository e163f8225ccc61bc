import { isEntityName } from '@eggmesh/schema';
import type { LogEntry } from '@eggmesh/store';
import type { OutgoingMessage } from './client.js';

/**
 * The message key: the entity and its id. With one partition (eggmesh's choice) it only labels the
 * message; with more, the client's key partitioner sends one entity's changes to one partition, so
 * their order holds there.
 */
export const messageKey = (entry: Pick<LogEntry, 'entity' | 'id'>): string => `${entry.entity}:${entry.id}`;

/** A log entry as a message: the key above, the whole entry as JSON (its position included). */
export function encodeEntry(entry: LogEntry): OutgoingMessage {
  return { key: messageKey(entry), value: JSON.stringify(entry) };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Parses a message value back into a log entry; throws on anything that is not one. */
export function decodeEntry(value: string): LogEntry {
  const parsed: unknown = JSON.parse(value);
  if (isRecord(parsed)) {
    const { position, entity, id, op, payload, previous, createdAt } = parsed;
    if (
      typeof position === 'number' &&
      Number.isSafeInteger(position) &&
      typeof entity === 'string' &&
      isEntityName(entity) &&
      typeof id === 'string' &&
      (op === 'create' || op === 'update' || op === 'delete') &&
      (payload === null || isRecord(payload)) &&
      (previous === null || isRecord(previous)) &&
      typeof createdAt === 'number'
    ) {
      return { position, entity, id, op, payload, previous, createdAt };
    }
  }
  throw new Error(`kafka: a message that is not an eggmesh log entry: ${value.slice(0, 200)}`);
}
