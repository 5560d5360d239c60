/**
 * Getting the Slurm allocation a run places on (backends.md §4.3): the job sflow already runs in
 * (`SLURM_JOB_ID` + `SLURM_JOB_NODELIST`, never cancelled), or a fresh `salloc --no-shell` with
 * the recipe's `extra_args` verbatim and in order. While the job waits in the queue, progress is
 * reported; an abort (Ctrl-C, workflow.timeout) kills salloc and cancels the pending job.
 */
import { SflowError } from '../../util/sflow-error.js';
import type { ExecOutcome } from '../../util/bounded-exec.js';
import { parseSallocOutput, type SallocProgress } from './steps.js';
import type { SlurmExec } from './slurm-exec.js';
import type { BackendConfig } from '../../plan/types.js';

/** salloc may wait this long in the queue unless SFLOW_SLURM_ALLOCATE_TIMEOUT (seconds) says otherwise */
export const DEFAULT_ALLOCATE_TIMEOUT_S = 24 * 3600;
/** a progress line at least this often while the job is queued */
const PROGRESS_EVERY_MS = 10_000;

const str = (v: unknown): string | undefined =>
  v === undefined || v === null || v === '' ? undefined : String(v);

/** a backend's `include_nodes` / `exclude_nodes` as Slurm takes them: names (or hostlists) joined by commas */
export const nodeFilter = (v: unknown): string | undefined =>
  Array.isArray(v) && v.length > 0 ? v.map(String).join(',') : undefined;

/**
 * `salloc --account A --partition P --nodes N --time T --job-name J [--nodelist I] [--exclude X]
 * --no-shell <extra_args…>`: `include_nodes` become `--nodelist` (Slurm allocates them, plus
 * others up to N), `exclude_nodes` become `--exclude`.
 */
export function sallocArgv(config: Partial<BackendConfig<'slurm'>>, workflow: string): string[] {
  const argv = ['salloc'];
  const flag = (f: string, v: string | undefined) => v !== undefined && argv.push(f, v);
  flag('--account', str(config.account));
  flag('--partition', str(config.partition));
  flag('--nodes', str(config.nodes));
  flag('--time', str(config.time));
  flag('--job-name', str(config.job_name) ?? (workflow || 'sflow'));
  flag('--nodelist', nodeFilter(config.include_nodes));
  flag('--exclude', nodeFilter(config.exclude_nodes));
  argv.push('--no-shell');
  for (const a of config.extra_args ?? []) argv.push(String(a));
  return argv;
}

/** The Slurm job this process runs inside, when it has both an id and a node list. */
export function inheritedJob(env: NodeJS.ProcessEnv): { jobId: string; nodeList: string } | undefined {
  const jobId = env.SLURM_JOB_ID || env.SLURM_JOBID;
  const nodeList = env.SLURM_JOB_NODELIST || env.SLURM_NODELIST;
  return jobId && nodeList ? { jobId, nodeList } : undefined;
}

export interface SallocOptions {
  exec: SlurmExec;
  signal: AbortSignal;
  progress: (message: string) => void;
  /** the job id, as soon as salloc prints it (queued or granted) */
  onJobId: (jobId: string) => void;
  timeoutMs: number;
}

/** Runs salloc; resolves with the granted job and node list, or rejects with salloc's own words. */
export async function runSalloc(
  argv: string[],
  o: SallocOptions,
): Promise<{ jobId: string; nodeList: string }> {
  const seen: SallocProgress = { granted: false, queued: false };
  let announced: string | undefined;
  const started = Date.now();
  const onText = (text: string) => {
    parseSallocOutput(text, seen);
    if (seen.jobId && seen.jobId !== announced) {
      announced = seen.jobId;
      o.onJobId(seen.jobId);
    }
    if (seen.queued && !seen.granted)
      o.progress(`Slurm job ${seen.jobId ?? '?'} queued: waiting for resources`);
  };
  const timer = setInterval(() => {
    if (seen.granted) return;
    const s = Math.round((Date.now() - started) / 1000);
    o.progress(
      `salloc: Slurm job ${seen.jobId ?? '(no id yet)'} still waiting after ${s}s (Ctrl-C cancels it)`,
    );
  }, PROGRESS_EVERY_MS);
  timer.unref();
  let r: ExecOutcome;
  try {
    r = await o.exec('salloc', argv.slice(1), {
      timeoutMs: o.timeoutMs,
      signal: o.signal,
      slowMs: Math.max(o.timeoutMs, 5_000),
      onStderr: onText,
    });
  } finally {
    clearInterval(timer);
  }
  onText(r.stdout + '\n' + r.stderr);
  if (o.signal.aborted) throw o.signal.reason instanceof Error ? o.signal.reason : new Error('cancelled');
  if (r.ok && seen.jobId) {
    return { jobId: seen.jobId, nodeList: seen.nodeList ?? '' };
  }
  const output = (r.stderr + r.stdout).trim();
  const why = r.timedOut
    ? `did not get the allocation within ${Math.round(o.timeoutMs / 1000)} s (SFLOW_SLURM_ALLOCATE_TIMEOUT)`
    : r.errorCode === 'ENOENT'
      ? 'salloc is not on PATH'
      : `exited ${r.exitCode ?? r.signal ?? '?'}`;
  throw new SflowError(
    'run.slurm_allocate',
    `Slurm allocation failed: ${argv.join(' ')}: ${why}${output ? `\n${output}` : ''}`,
    {
      phase: 'run',
      hint: 'check the account, partition and node count of the slurm backend, and whether this cluster needs (or forbids) --gpus-per-node / --gres in extra_args',
    },
  );
}

/** Allocation timeout from the environment (seconds), else the default. */
export function allocateTimeoutMs(env: NodeJS.ProcessEnv): number {
  const s = Number(env.SFLOW_SLURM_ALLOCATE_TIMEOUT);
  return (Number.isFinite(s) && s > 0 ? s : DEFAULT_ALLOCATE_TIMEOUT_S) * 1000;
}
