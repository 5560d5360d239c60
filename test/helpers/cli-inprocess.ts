/**
 * The CLI's own entry (`main` of src/cli/main.ts) run inside the test process: same argument
 * parsing, commands, error printing and exit codes as `node bin/sflow.js …`, without starting
 * Node for every case. stdout/stderr are captured, the working directory and environment are
 * switched for the call and restored afterwards. Calls must not overlap (tests in one file run
 * one after another; every file runs in its own process). Each file that uses this keeps one
 * spawned `sflow()` call (test/helpers/cli.ts) as its end-to-end check of the built CLI.
 * Per-process caches a fresh CLI would not have (the local GPU list) are reset for every call.
 */
import { vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { resetLocalGpuCache } from '../../src/gpu/local-topology.js';
import type { CliResult } from './cli.js';

let busy = false;

export async function sflowInProcess(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<CliResult> {
  if (busy) throw new Error('sflowInProcess: calls must not overlap');
  busy = true;
  let stdout = '';
  let stderr = '';
  const capture =
    (append: (s: string) => void) =>
    (chunk: string | Uint8Array, ...rest: unknown[]) => {
      append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const cb = rest.find((x) => typeof x === 'function') as (() => void) | undefined;
      if (cb) queueMicrotask(cb);
      return true;
    };
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture((s) => (stdout += s)));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture((s) => (stderr += s)));
  const savedEnv = { ...process.env };
  const savedCwd = process.cwd();
  const savedExit = process.exitCode;
  process.exitCode = undefined;
  try {
    for (const [k, v] of Object.entries({ NO_COLOR: '1', ...opts.env })) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    if (opts.cwd) process.chdir(opts.cwd);
    // what a new process would not have: nvidia-smi's answer is cached per process
    resetLocalGpuCache();
    await main(['node', 'sflow', ...args], { ownsProcess: false });
    return { code: Number(process.exitCode ?? 0), stdout, stderr };
  } finally {
    process.exitCode = savedExit;
    process.chdir(savedCwd);
    for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k];
    Object.assign(process.env, savedEnv);
    out.mockRestore();
    err.mockRestore();
    busy = false;
  }
}
