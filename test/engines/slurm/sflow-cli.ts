/**
 * Runs the built sflow CLI as a child process against the Slurm test cluster (its environment:
 * SLURM_CONF), in a private working folder, optionally with the fake nvidia-smi first on PATH.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, REPO } from '../../helpers/cli.js';
import { slurm } from './slurm-helpers.js';

export const FAKE_BIN = join(REPO, 'assets', 'test-bin');

export interface Run {
  child: ChildProcess;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  cwd: string;
  /** the run folder once it exists */
  runDir(): string;
}

export function newCwd(dirs: string[]): string {
  const d = mkdtempSync(join(tmpdir(), 'sflow-slurm-run-'));
  dirs.push(d);
  return d;
}

export function startSflow(
  args: string[],
  o: { cwd: string; env?: Record<string, string>; fakeGpus?: number; timeoutMs?: number },
): Run {
  const env: Record<string, string> = { NO_COLOR: '1', ...(o.env ?? {}) };
  if (o.fakeGpus !== undefined) {
    env.PATH = `${FAKE_BIN}:${process.env.PATH ?? ''}`;
    env.FAKE_NVIDIA_SMI_GPUS = String(o.fakeGpus);
  }
  const child = spawn(process.execPath, [BIN, ...args], { cwd: o.cwd, env: slurm.childEnv(env) });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += String(d)));
  child.stderr?.on('data', (d) => (stderr += String(d)));
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 120_000);
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
  return {
    child,
    done,
    cwd: o.cwd,
    runDir: () => {
      const root = join(o.cwd, 'sflow_output');
      const dirs = readdirSync(root).filter((d) => !d.startsWith('_') && !d.startsWith('bulk'));
      if (dirs.length !== 1) throw new Error(`expected one run folder in ${root}: ${dirs.join(', ')}`);
      return join(root, dirs[0]);
    },
  };
}

export async function runSflow(
  args: string[],
  o: { cwd: string; env?: Record<string, string>; fakeGpus?: number; timeoutMs?: number },
) {
  const r = startSflow(args, o);
  const out = await r.done;
  return { ...out, runDir: () => r.runDir() };
}
