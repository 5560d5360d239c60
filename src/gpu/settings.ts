/**
 * GPU reservation registry settings from the environment (backends.md §3.7, runtime.md §7.4):
 * SFLOW_GPU_RESERVATION, SFLOW_WAIT_FOR_GPUS, SFLOW_GPU_RESERVATION_DIR, SFLOW_GPU_BUSY_MEM_MIB,
 * SFLOW_GPU_IGNORE_FOREIGN — and when the registry is skipped.
 */
import os from 'node:os';
import path from 'node:path';
import { SflowError, type ErrorPhase } from '../util/sflow-error.js';

export interface RegistrySettings {
  enabled: boolean;
  /** machine-local record directory */
  dir: string;
  /** foreign memory (MiB) above which a GPU counts as busy */
  busyMemMiB: number;
  ignoreForeign: boolean;
  /** undefined: fail fast; 0: wait forever; N: wait at most N seconds */
  waitSeconds: number | undefined;
}

export const DEFAULT_BUSY_MEM_MIB = 512;
export const REGISTRY_DIR_NAME = 'sflow-gpu-reservations';

type Env = Record<string, string | undefined>;

/**
 * A `--wait-for-gpus` / SFLOW_WAIT_FOR_GPUS value: empty or 0 = forever (0), N ≥ 0 seconds.
 * `600s`, `-1`, `abc` are rejected (the CLI calls this at parse time with phase 'usage').
 */
export function parseWaitForGpus(raw: string, source: string, phase: ErrorPhase = 'run'): number {
  const v = raw.trim();
  if (v === '') return 0;
  if (!/^\d+(\.\d+)?$/.test(v)) {
    throw new SflowError(
      'GPU_WAIT_VALUE',
      `${source} must be a number of seconds (0 = wait forever), got '${raw}'`,
      {
        phase,
      },
    );
  }
  return Number(v);
}

/**
 * Settings from `env`; `backendWaitForGpus` is the backend's `wait_for_gpus` field, which
 * SFLOW_WAIT_FOR_GPUS (what `--wait-for-gpus` sets) overrides. Any SFLOW_WAIT_FOR_GPUS value, even
 * empty, turns waiting on.
 */
export function registrySettings(env: Env = process.env, backendWaitForGpus?: number): RegistrySettings {
  const rawMem = env.SFLOW_GPU_BUSY_MEM_MIB;
  let busyMemMiB = DEFAULT_BUSY_MEM_MIB;
  if (rawMem !== undefined && rawMem.trim() !== '') {
    if (!/^\d+$/.test(rawMem.trim())) {
      throw new SflowError(
        'GPU_BUSY_MEM_VALUE',
        `SFLOW_GPU_BUSY_MEM_MIB must be a whole number of MiB, got '${rawMem}'`,
        {
          phase: 'run',
        },
      );
    }
    busyMemMiB = Number(rawMem.trim());
  }
  const rawWait = env.SFLOW_WAIT_FOR_GPUS;
  return {
    enabled: (env.SFLOW_GPU_RESERVATION ?? '1').trim() !== '0',
    dir: env.SFLOW_GPU_RESERVATION_DIR || path.join(os.tmpdir(), REGISTRY_DIR_NAME),
    busyMemMiB,
    ignoreForeign: env.SFLOW_GPU_IGNORE_FOREIGN === '1',
    waitSeconds:
      rawWait !== undefined ? parseWaitForGpus(rawWait, 'SFLOW_WAIT_FOR_GPUS') : backendWaitForGpus,
  };
}

export interface SkipContext {
  env?: Env;
  /** number of nodes of the backend allocation */
  nodes: number;
  /** a Docker pool (`hosts:`): the GPUs live on remote machines */
  pool?: boolean;
  /** nvidia-smi ran on this host */
  nvidiaSmi: boolean;
  platform?: NodeJS.Platform;
}

/** why the registry does not apply (log it), or null when it does */
export function registrySkipReason(c: SkipContext): string | null {
  const env = c.env ?? process.env;
  if ((env.SFLOW_GPU_RESERVATION ?? '1').trim() === '0')
    return 'GPU reservation disabled by SFLOW_GPU_RESERVATION=0';
  if ((c.platform ?? process.platform) === 'win32')
    return 'GPU reservation skipped: no POSIX file locking on Windows';
  if (c.pool) return 'GPU reservation skipped: Docker pool (hosts:) — the GPUs are on remote hosts';
  if (c.nodes > 1) return `GPU reservation skipped: backend spans ${c.nodes} nodes (single local host only)`;
  if (!c.nvidiaSmi) return 'GPU reservation skipped: nvidia-smi does not run on this host';
  return null;
}
