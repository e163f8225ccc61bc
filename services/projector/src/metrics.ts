import type { Metrics } from '@eggmesh/service-kit';
import { Counter, Gauge } from 'prom-client';
import type { Projector } from './projector.js';

/**
 * The projector's progress, on the service-kit registry of its app (read when scraped). Names are the
 * ones the projector has always exposed.
 */
export function registerProjectorMetrics(metrics: Metrics, projector: Projector): void {
  const registers = [metrics.registry];
  // One reading of each per scrape: the collects start in registration order, the lag uses both.
  const readings = { position: Promise.resolve(0), head: Promise.resolve(0) };
  new Gauge({
    name: 'eggmesh_projector_position',
    help: 'Log position the projections reflect',
    registers,
    async collect() {
      readings.position = projector.store.checkpoint();
      this.set(await readings.position);
    },
  });
  new Gauge({
    name: 'eggmesh_log_head',
    help: 'Newest log position',
    registers,
    async collect() {
      readings.head = projector.log.head();
      this.set(await readings.head);
    },
  });
  new Gauge({
    name: 'eggmesh_projector_lag_entries',
    help: 'Log entries not yet applied',
    registers,
    async collect() {
      const [p, h] = await Promise.all([readings.position, readings.head]);
      this.set(Math.max(0, h - p));
    },
  });
  new Gauge({
    name: 'eggmesh_projector_lag_ms',
    help: 'Age of the oldest log entry not yet applied (ms)',
    registers,
    async collect() {
      const [p, h] = await Promise.all([readings.position, readings.head]);
      if (h <= p) return this.set(0);
      const [next] = await projector.log.read(p, 1);
      this.set(next ? Math.max(0, Date.now() - next.createdAt) : 0);
    },
  });
  const counter = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  counter(
    'eggmesh_projector_events_applied_total',
    'Log entries applied by this process',
    () => projector.eventsApplied,
  );
  counter(
    'eggmesh_projector_batches_total',
    'Batches committed by this process',
    () => projector.batchesApplied,
  );
  new Gauge({
    name: 'eggmesh_projector_last_batch_seconds',
    help: 'Duration of the last batch',
    registers,
    collect() {
      this.set(projector.lastBatchMs / 1000);
    },
  });
}
