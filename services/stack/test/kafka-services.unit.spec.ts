import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '@eggmesh/service-kit';
import { describe, expect, it } from 'vitest';
import { kafkaServices } from '../src/kafka-services.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const script = (path: string) => `${repo}services/${path}`;
const url = (port: number) => `http://127.0.0.1:${port}`;

describe('the Kafka entries of the stack supervisor', () => {
  it('adds nothing when the log is the store’s own', () => {
    expect(kafkaServices(loadConfig({}), script, url)).toEqual([]);
  });

  it('starts the local broker on EGGMESH_DEV_KAFKA_PORT and the relay when EGGMESH_LOG=kafka', () => {
    const config = loadConfig({
      EGGMESH_LOG: 'kafka',
      EGGMESH_DEV_KAFKA_PORT: '19092',
      EGGMESH_KAFKA_BROKERS: '127.0.0.1:19092',
      RELAY_PORT: '4037',
    });
    const services = kafkaServices(config, script, url);
    expect(services.map((s) => s.name)).toEqual(['kafka', 'relay']);
    const [broker, relay] = services;
    expect(broker?.healthUrl).toBeUndefined();
    expect(broker?.script.endsWith('infra/kafka/server.mjs')).toBe(true);
    expect(existsSync(broker?.script ?? '')).toBe(true);
    expect(relay?.script).toBe(script('relay/dist/main.js'));
    expect(relay?.healthUrl).toBe('http://127.0.0.1:4037/health');
  });

  it('starts no local broker when the brokers are elsewhere', () => {
    const config = loadConfig({ EGGMESH_LOG: 'kafka', EGGMESH_KAFKA_BROKERS: 'kafka-1:9092,kafka-2:9092' });
    expect(kafkaServices(config, script, url).map((s) => s.name)).toEqual(['relay']);
  });
});
