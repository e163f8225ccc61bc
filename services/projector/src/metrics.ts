import type { Metrics } from '@eggmesh/service-kit';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Projector } from './projector.js';

/** Bucket bounds (s) of `eggmesh_projector_apply_lag_seconds`: fine below 100 ms, where the target is. */
export const APPLY_LAG_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

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
  // Per applied entry, from its write to the commit that made it visible: the projection lag a reader
  // sees, as a distribution (the gauge above is only the oldest entry waiting now).
  const applyLag = new Histogram({
    name: 'eggmesh_projector_apply_lag_seconds',
    help: "Time from each log entry's write to the projector's commit of it",
    buckets: APPLY_LAG_BUCKETS,
    registers,
  });
  projector.onApplied = (ageMs) => applyLag.observe(ageMs / 1000);
  new Gauge({
    name: 'eggmesh_projector_last_batch_seconds',
    help: 'Duration of the last batch',
    registers,
    collect() {
      this.set(projector.lastBatchMs / 1000);
    },
  });
}
