import type { Metrics } from '@eggmesh/service-kit';
import { Counter, Gauge } from 'prom-client';
import type { Projector } from './projector.js';

/**
 * The projector's progress, on the service-kit registry of its app (read when scraped). Names are the
 * ones the projector has always exposed.
 */
export function registerProjectorMetrics(metrics: Metrics, projector: Projector): void {
  const registers = [metrics.registry];
  let position = 0;
  let last = 0;
  new Gauge({
    name: 'eggmesh_projector_position',
    help: 'Log position the projections reflect',
    registers,
    async collect() {
      position = await projector.store.checkpoint();
      this.set(position);
    },
  });
  new Gauge({
    name: 'eggmesh_log_head',
    help: 'Newest log position',
    registers,
    async collect() {
      last = await projector.log.head();
      this.set(last);
    },
  });
  new Gauge({
    name: 'eggmesh_projector_lag_entries',
    help: 'Log entries not yet applied',
    registers,
    // Collected after the two above (registration order), from the same reading of each.
    collect() {
      this.set(Math.max(0, last - position));
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
