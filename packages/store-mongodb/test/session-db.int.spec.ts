import { type CommandStartedEvent, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sharedFerretdbUri } from '../../../infra/test/shared-servers.js';
import { CausalClock, sessionDb } from '../src/session-db.js';
import { dropDatabase, freshDbName } from './helpers.js';

// FerretDB has sessions (mongo-java-server has none, so a view there is the store itself): the reads
// of a view run in sessions there.
describe(`one request's view reads in a session per read (${inject('ferretdbServer')})`, () => {
  let uri = '';
  const dbName = freshDbName();
  let client: MongoClient;
  const started: CommandStartedEvent[] = [];

  beforeAll(async () => {
    uri = await sharedFerretdbUri();
    client = new MongoClient(uri, { monitorCommands: true });
    client.on('commandStarted', (event) => started.push(event));
    await client
      .db(dbName)
      .collection('hens')
      .insertMany([
        { _id: 'a', n: 1 },
        { _id: 'b', n: 2 },
        { _id: 'c', n: 3 },
      ] as never[]);
  });

  afterAll(async () => {
    await client.close();
    await dropDatabase(uri, dbName);
  });

  it('sends parallel reads in sessions of their own and ends each once its answer (or cursor) is done', async () => {
    const clock = new CausalClock(client);
    const db = sessionDb(client.db(dbName), clock);
    const hens = db.collection<{ _id: string; n: number }>('hens');
    started.length = 0;
    const [one, all, sum, count] = await Promise.all([
      hens.findOne({ _id: 'b' }),
      hens.find({}).sort({ _id: 1 }).toArray(),
      hens.aggregate([{ $group: { _id: null, total: { $sum: '$n' } } }]).toArray(),
      hens.countDocuments({ n: { $gt: 1 } }),
    ]);
    expect(one?.n).toBe(2);
    expect(all.map((hen) => hen._id)).toEqual(['a', 'b', 'c']);
    expect(sum[0]?.total).toBe(6);
    expect(count).toBe(2);
    const reads = started.filter((event) => ['find', 'aggregate'].includes(event.commandName));
    expect(reads).toHaveLength(4);
    const sessions = new Set(reads.map((event) => JSON.stringify(event.command.lsid)));
    expect(sessions.size).toBe(4);
    // Every session ended with its read; a cursor left unread is ended with the view.
    await new Promise((resolve) => setImmediate(resolve));
    expect(clock.reading).toBe(0);
    const unread = hens.find({}).batchSize(1);
    await unread.next();
    expect(clock.reading).toBe(1);
    await clock.end();
    expect(clock.reading).toBe(0);
  });
});
