/**
 * `sflow run` in this process (the emulator lives here too) in a private working directory: the
 * exit code, output, run directory and the task table of its summary.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sflowInProcess } from '../../helpers/cli-inprocess.js';
import { onlyRunDir, taskTable } from '../../helpers/run-dir.js';
import type { K8s } from './harness.js';

export interface RecipeRun {
  code: number | null;
  stdout: string;
  stderr: string;
  cwd: string;
  runDir: string;
  statuses: Record<string, string>;
}

/** runs `files` (with `--kubeconfig` of the emulator when `k` is given); `dirs` collects the scratch folders */
export async function runRecipe(
  k: K8s | undefined,
  files: string[],
  extra: string[],
  dirs: string[],
  env: Record<string, string> = {},
): Promise<RecipeRun> {
  const cwd = mkdtempSync(join(tmpdir(), 'sflow-k8s-run-'));
  dirs.push(cwd);
  const args = ['run', ...files.flatMap((f) => ['-f', f]), ...extra];
  if (k) args.push('--kubeconfig', k.emu.kubeconfigPath);
  const r = await sflowInProcess(args, { cwd, env: { SFLOW_K8S_WAIT_HEARTBEAT_SECS: '1', ...env } });
  let runDir = '';
  try {
    runDir = onlyRunDir(join(cwd, 'sflow_output'));
  } catch {
    /* the run never made one */
  }
  const statuses = runDir
    ? Object.fromEntries(Object.entries(taskTable(runDir)).map(([t, v]) => [t, v.status]))
    : {};
  return { ...r, cwd, runDir, statuses };
}
