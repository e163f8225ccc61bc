import { afterEach, describe, expect, it } from 'vitest';
import { type KafkaClient, kafkajsClient, survivesBrokerLoss } from '../src/index.js';
import { freshTopic, kafkaBrokers, kafkaServer } from './helpers.js';

describe(`the topic's durability, on ${kafkaServer()} (one broker)`, () => {
  const clients: KafkaClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
  });
  const open = (durability?: { replicationFactor: number; minInsyncReplicas: number }) => {
    const c = kafkajsClient({
      brokers: [kafkaBrokers()],
      topic: freshTopic(),
      clientId: 'eggmesh-test',
      ...(durability ? { durability } : {}),
    });
    clients.push(c);
    return c;
  };

  it('creates the topic with the replication factor and min.insync.replicas it is given', async () => {
    const plain = open();
    expect(await plain.durability()).toBeNull();
    await plain.ensureTopic(1);
    expect(await plain.durability()).toEqual({ replicationFactor: 1, minInsyncReplicas: 1 });
    // min.insync.replicas reaches the broker as given (2 cannot be met by one replica: a produce with
    // acks -1 would be refused, never acknowledged on one copy).
    const strict = open({ replicationFactor: 1, minInsyncReplicas: 2 });
    await strict.ensureTopic(1);
    expect(await strict.durability()).toEqual({ replicationFactor: 1, minInsyncReplicas: 2 });
  });

  it('fails to create a topic with more replicas than brokers, saying so', async () => {
    const wide = open({ replicationFactor: 3, minInsyncReplicas: 2 });
    await expect(wide.ensureTopic(1)).rejects.toThrow(/replication factor|brokers/i);
    expect(await wide.durability()).toBeNull();
  });

  it('counts a topic safe through the loss of one broker only with two in-sync copies per acknowledgement', () => {
    expect(survivesBrokerLoss({ replicationFactor: 3, minInsyncReplicas: 2 })).toBe(true);
    expect(survivesBrokerLoss({ replicationFactor: 2, minInsyncReplicas: 2 })).toBe(true);
    expect(survivesBrokerLoss({ replicationFactor: 3, minInsyncReplicas: 1 })).toBe(false);
    expect(survivesBrokerLoss({ replicationFactor: 1, minInsyncReplicas: 1 })).toBe(false);
    expect(survivesBrokerLoss({ replicationFactor: 1, minInsyncReplicas: 2 })).toBe(false);
  });
});
