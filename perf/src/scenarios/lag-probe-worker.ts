import { parentPort, workerData } from 'node:worker_threads';
import { LagProbe, type LagProbeState } from './lag-probe.js';

// Started by LagProbe.runInWorker: probes until told to stop, then reports.
if (parentPort) await LagProbe.workerMain(workerData as LagProbeState, parentPort);
