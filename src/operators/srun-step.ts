/**
 * What the srun operator adds around a task's script and container (backends.md §4.6, §6.3.3):
 * the in-step GPU selection prelude, the task's node index on multi-node steps, and the automatic
 * container mounts.
 */
import { statSync } from 'node:fs';
import { extname, dirname } from 'node:path';
import { TERM_TRAP_LINE } from './graceful-stop.js';
import type { OperatorInput } from './types.js';

/** the staged copy of assets/sh/gpu-select.sh in the run folder (the Slurm backend writes it) */
export const GPU_PRELUDE_FILE = 'sflow_gpu_select.sh';

const set = (v: unknown): boolean => v !== undefined && v !== null && v !== '';

/** POSIX single-quoting: the value as one shell word */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** in-step GPU re-selection applies: the task has a GPU slice and `gpus_per_task` does not opt out */
export function usesGpuPrelude(input: Pick<OperatorInput<'srun'>, 'gpus' | 'config'>): boolean {
  return Boolean(input.gpus?.length) && !set(input.config.gpus_per_task);
}

/**
 * Where each process of a step appends the moments it started and ended (`s <seconds>.<fraction>`,
 * `e …` lines, in the task folder): Slurm 22.05 without accounting keeps no step times after the
 * step (and `scontrol show step` has whole seconds while it runs), so the step says it itself.
 */
export const STEP_STAMP_FILE = '.sflow_step_times';

/**
 * The step's first line: its start time into the task folder now, its end by an EXIT trap (a
 * script that sets its own EXIT trap or `exec`s leaves no end: srun's exit stands for it). Bash 5's
 * clock, else `date`; never fails the step.
 */
export function stepStampLine(taskDir: string): string {
  const file = shellQuote(`${taskDir}/${STEP_STAMP_FILE}`);
  return `__sflow_t() { echo "$1 \${EPOCHREALTIME:-$(date +%s.%N)}" >> ${file}; } 2>/dev/null; __sflow_t s; trap "__sflow_t e" EXIT`;
}

/**
 * The step's payload: its start stamp, the TERM trap, the GPU prelude (sourced; it also sets
 * SFLOW_TASK_NODE_INDEX and SFLOW_TASK_NODE_NAME) on GPU tasks, the node index and name from
 * Slurm on other multi-node steps, then the task's own script. (A single-node step keeps the
 * plan's values: the same.)
 */
export function stepScript(input: OperatorInput<'srun'>): string {
  const runDir = input.env.SFLOW_WORKFLOW_OUTPUT_DIR;
  const taskDir = input.env.SFLOW_TASK_OUTPUT_DIR;
  const stamp = `${taskDir ? `${stepStampLine(taskDir)}\n` : ''}${TERM_TRAP_LINE}\n`;
  if (usesGpuPrelude(input) && runDir)
    return `${stamp}. ${shellQuote(`${runDir}/${GPU_PRELUDE_FILE}`)} || exit 97\n${input.script}`;
  if (input.nodes.length > 1)
    return `${stamp}export SFLOW_TASK_NODE_INDEX="\${SLURM_NODEID:-0}" SFLOW_TASK_NODE_NAME="\${SLURMD_NODENAME:-$SFLOW_TASK_NODE_NAME}"\n${input.script}`;
  return `${stamp}${input.script}`;
}

/** the host directory an artifact path needs mounted (null: none, e.g. a squashfs image) */
function artifactMountDir(path: string): string | null {
  if (path.endsWith('.sqsh')) return null;
  try {
    return statSync(path).isDirectory() ? path : dirname(path);
  } catch {
    return extname(path) ? dirname(path) : path;
  }
}

/**
 * Mounts a container step gets without asking, each `<abs>:<abs>:rw`, after the given ones and
 * without repeating a (source, target) pair: every fs:// / file:// artifact's folder, then the
 * workspace, the output root, the run folder and the task folder.
 */
export function autoContainerMounts(input: OperatorInput, given: string[]): string[] {
  const pair = (m: string) => m.split(':').slice(0, 2).join(':');
  const seen = new Set(given.map((m) => pair(m.includes(':') ? m : `${m}:${m}`)));
  const e = input.env;
  const dirs = [
    ...(input.artifactPaths ?? []).map(artifactMountDir),
    e.SFLOW_WORKSPACE_DIR,
    e.SFLOW_OUTPUT_DIR,
    e.SFLOW_WORKFLOW_OUTPUT_DIR,
    e.SFLOW_TASK_OUTPUT_DIR,
  ];
  const out: string[] = [];
  for (const d of dirs) {
    if (!d) continue;
    const key = `${d}:${d}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(`${key}:rw`);
  }
  return out;
}
