/**
 * How a collector is started: "one command per node". `collectorArgs` is the argument list of
 * assets/sh/monitor-collector.sh for one planned collector; a backend's launcher runs it on the
 * node (local and Docker's local engine: a process group on this host; Slurm: an `srun --overlap`
 * step per node; Docker pool: over ssh, the script passed as an argument to a small remote `sh`
 * wrapper that streams the samples back and stops when ssh's stdin closes).
 */
import { assetPath } from '../config/assets.js';
import type { CollectorPlan } from '../plan/monitor-schedule.js';

export interface CollectorLaunch {
  spec: CollectorPlan;
  /** where the raw files go (the collector's SFLOW_TASK_OUTPUT_DIR) */
  rawDir: string;
  scriptPath: string;
}

export interface RunningCollector {
  /** the host name the collector writes into its file names */
  hostName: string;
  nodeId: string;
  /** driver clock when it was started */
  startedAt: number;
  /** TERM, then KILL after a grace; resolves when it is gone. Idempotent. */
  stop(): Promise<void>;
}

export interface CollectorLauncher {
  start(l: CollectorLaunch): Promise<RunningCollector>;
}

export function collectorArgs(
  spec: CollectorPlan,
  o: { rawDir: string; host?: string; parentPid?: number },
): string[] {
  const scopes = Object.keys(spec.scopes);
  const args = ['--interval-ms', String(spec.tickMs), '--scopes', scopes.join(',') || 'none'];
  for (const [k, v] of Object.entries(spec.scopes))
    if (v !== spec.tickMs) args.push('--scope-interval', `${k}=${v}`);
  if (spec.scopes.gpu !== undefined) args.push('--gpu-fields', spec.gpuFields.join(','));
  args.push('--out-dir', o.rawDir, '--node-id', String(spec.nodeId));
  if (o.host) args.push('--host', o.host);
  if (o.parentPid) args.push('--parent-pid', String(o.parentPid));
  for (const c of spec.custom) args.push('--custom', c);
  return args;
}

/** assets/sh/monitor-collector.sh of this installation (checkout, npm install or single executable). */
export function collectorScriptPath(): string {
  return assetPath('sh/monitor-collector.sh');
}
