/**
 * The in-step GPU selection's audit records (`<task dir>/sflow_gpus.log`, or one
 * `sflow_gpus.<node>.log` per node of a multi-node task; written by assets/sh/gpu-select.sh on
 * Slurm), read back for the summary's GPU Assignment section: what each node's step exported.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface GpuAudit {
  node: string;
  /** CUDA_VISIBLE_DEVICES the step exported (absent on an abort) */
  selected?: string;
  plannedUuids?: string;
  mode?: string;
  /** `OK`, or `ABORT exit 97: <reason>` */
  result: string;
}

function parse(text: string): GpuAudit {
  const f: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+): (.*)$/.exec(line);
    if (m) f[m[1]] = m[2];
  }
  return {
    node: f.node ?? '?',
    ...(f.selected !== undefined ? { selected: f.selected } : {}),
    ...(f.planned_uuids && f.planned_uuids !== '-' ? { plannedUuids: f.planned_uuids } : {}),
    ...(f.mode ? { mode: f.mode } : {}),
    result: f.result ?? '?',
  };
}

/** Every audit record of a task folder, by node name; empty when there are none. */
export function readGpuAudits(taskDir: string): GpuAudit[] {
  let names: string[];
  try {
    names = readdirSync(taskDir).filter((n) => /^sflow_gpus(\..+)?\.log$/.test(n));
  } catch {
    return [];
  }
  return names.sort().flatMap((n) => {
    try {
      return [parse(readFileSync(join(taskDir, n), 'utf8'))];
    } catch {
      return [];
    }
  });
}

/** One cell: what the steps exported on each node, e.g. `n2: CUDA_VISIBLE_DEVICES=0 (GPU-…)`. */
export function describeGpuAudits(audits: GpuAudit[]): string {
  return audits
    .map((a) =>
      a.selected !== undefined
        ? `${a.node}: CUDA_VISIBLE_DEVICES=${a.selected}${a.plannedUuids ? ` (${a.plannedUuids})` : ''}`
        : `${a.node}: ${a.result}`,
    )
    .join('; ');
}
