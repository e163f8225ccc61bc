import type { Projector } from './projector.js';

/** Prometheus text exposition of the projector's progress. */
export function metricsText(projector: Projector, position: number, head: number, lagMs: number): string {
  const lines = [
    ['eggmesh_projector_position', 'gauge', 'Log position the projections reflect', position],
    ['eggmesh_log_head', 'gauge', 'Newest log position', head],
    ['eggmesh_projector_lag_entries', 'gauge', 'Log entries not yet applied', Math.max(0, head - position)],
    ['eggmesh_projector_lag_ms', 'gauge', 'Age of the oldest log entry not yet applied (ms)', lagMs],
    [
      'eggmesh_projector_events_applied_total',
      'counter',
      'Log entries applied by this process',
      projector.eventsApplied,
    ],
    [
      'eggmesh_projector_batches_total',
      'counter',
      'Batches committed by this process',
      projector.batchesApplied,
    ],
    [
      'eggmesh_projector_last_batch_seconds',
      'gauge',
      'Duration of the last batch',
      projector.lastBatchMs / 1000,
    ],
  ] as const;
  return `${lines.map(([name, type, help, value]) => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}`).join('\n')}\n`;
}
