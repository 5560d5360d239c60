/**
 * Shared pieces of the Slurm engine tests: the test cluster's settings, a backend fragment that
 * points at its partition, queue checks (`squeue` of jobs and steps by name), and polling with a
 * deadline. Every job a test creates is named `sflowt-<pid>-…` (or is a workflow named so) and
 * cancelled by the test that created it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { slurmKind } from '../../../src/backends/slurm/kind.js';
import type { BackendContext } from '../../../src/backends/backend.js';
import type { BackendConfig, PlannedBackend } from '../../../src/plan/types.js';
import { engine } from '../helpers/engines.js';

export const slurm = engine('slurm');
export const TAG = `sflowt${process.pid}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** polls `check` until it returns something truthy; fails naming `what` after the deadline */
export async function until<T>(what: string, check: () => Promise<T> | T, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** SLURM_CONF and friends put into this test process, for backends created in process */
export function useClusterEnv(): void {
  for (const [k, v] of Object.entries(slurm.env)) process.env[k] = v;
}

/** jobs whose name starts with `prefix` (ids) */
export async function jobsNamed(prefix: string): Promise<string[]> {
  const r = await slurm.exec('squeue', ['-h', '-o', '%i %j']);
  return String(r.stdout)
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([id, name]) => id && name?.startsWith(prefix))
    .map(([id]) => id);
}

/** every step of the given jobs still listed */
export async function stepsOfJobs(jobs: string[]): Promise<string[]> {
  if (!jobs.length) return [];
  const r = await slurm.exec('squeue', ['-h', '-s', '-j', jobs.join(','), '-o', '%i']);
  return String(r.stdout)
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** all job ids and step ids in the queue */
export async function queue(): Promise<{ jobs: string[]; steps: string[] }> {
  const j = await slurm.exec('squeue', ['-h', '-o', '%i']);
  const s = await slurm.exec('squeue', ['-h', '-s', '-o', '%i']);
  const lines = (x: unknown) =>
    String(x)
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  return { jobs: lines(j.stdout), steps: lines(s.stdout).filter((id) => !id.endsWith('.extern')) };
}

export async function cancelNamed(prefix: string): Promise<void> {
  const ids = await jobsNamed(prefix);
  if (ids.length) await slurm.exec('scancel', ids);
}

/** A backend fragment for the test cluster (name defaults to `cluster`). */
export function clusterFragment(
  dir: string,
  o: { name?: string; nodes?: number; gpusPerNode?: number; jobName?: string; extra?: string[] } = {},
): string {
  const path = join(dir, `slurm-${o.name ?? 'cluster'}.yaml`);
  const lines = [
    "version: '0.1'",
    'backends:',
    `  - name: ${o.name ?? 'cluster'}`,
    '    type: slurm',
    '    default: true',
    '    account: sflowtest',
    `    partition: ${slurm.get('SFLOW_TEST_SLURM_PARTITION')}`,
    "    time: '00:10:00'",
    `    nodes: ${o.nodes ?? 2}`,
    `    gpus_per_node: ${o.gpusPerNode ?? Number(slurm.get('SFLOW_TEST_SLURM_GPUS_PER_NODE'))}`,
    ...(o.jobName ? [`    job_name: ${o.jobName}`] : []),
    ...(o.extra?.length ? ['    extra_args:', ...o.extra.map((a) => `      - '${a}'`)] : []),
  ];
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

/** a planned Slurm backend for in-process backend tests */
export function plannedSlurm(
  config: Partial<BackendConfig<'slurm'>> = {},
  name = 'cluster',
): PlannedBackend<'slurm'> {
  return {
    name,
    type: 'slurm',
    isDefault: true,
    placeholder: false,
    nodes: [],
    config: {
      name,
      type: 'slurm',
      account: 'sflowtest',
      partition: slurm.get('SFLOW_TEST_SLURM_PARTITION'),
      time: '00:10:00',
      nodes: 1,
      ...config,
    },
    capabilities: slurmKind.capabilities,
  };
}

export function backendCtx(runDir: string, over: Partial<BackendContext> = {}): BackendContext {
  return {
    runId: `${TAG}-run`,
    runDir,
    log: () => undefined,
    options: {},
    env: { ...process.env, ...slurm.env },
    gpuTasks: false,
    ...over,
  };
}
