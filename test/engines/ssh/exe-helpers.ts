/**
 * Shared by the single-executable and --ssh suites: the executable (built on demand when missing
 * or older than the last `npm run build`), the CLI run asynchronously (for Ctrl-C and killed
 * connections), and commands on the SSH test hosts.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, REPO } from '../../helpers/cli.js';

export const EXE = join(REPO, 'dist', `sflow-linux-${process.arch}`);
export const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string })
  .version;
/** the Node version the executables embed: NODE_LINE of scripts/node-dist.mjs */
export const NODE_24 = /version: '(24\.\d+\.\d+)'/.exec(
  readFileSync(join(REPO, 'scripts', 'node-dist.mjs'), 'utf8'),
)![1];

/** The pinned Node 24 binary the executables embed (scripts/node-dist.mjs; fetched when missing). */
export function node24(): string {
  const bin = execFileSync(process.execPath, [join(REPO, 'scripts', 'node-dist.mjs'), 'bin'], {
    encoding: 'utf8',
    timeout: 600_000,
  });
  return join(bin.trim(), 'node');
}

/** Builds dist/sflow-linux-<arch> unless it is newer than dist/ (bounded: 5 minutes). */
export function ensureExecutable(): string {
  const stamp = join(REPO, 'dist', '.build-stamp');
  const fresh =
    existsSync(EXE) && existsSync(`${EXE}.id`) && statSync(EXE).mtimeMs >= statSync(stamp).mtimeMs;
  if (!fresh)
    execFileSync(process.execPath, [join(REPO, 'scripts', 'build-exe.mjs')], {
      cwd: REPO,
      env: { ...process.env, SFLOW_EXE_ARCH: process.arch },
      stdio: 'pipe',
      timeout: 300_000,
    });
  return readFileSync(`${EXE}.id`, 'utf8').trim();
}

export interface Running {
  child: ChildProcess;
  out: { stdout: string; stderr: string };
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** `node bin/sflow.js ARGS` in the background (killed at the deadline). */
export function sflowAsync(
  args: string[],
  o: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: o.cwd,
    env: { ...process.env, NO_COLOR: '1', ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 120_000);
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, ...out });
    }),
  );
  return { child, out, done };
}

export async function until<T>(
  what: string,
  f: () => T | undefined | Promise<T | undefined>,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** pids of processes whose command line contains `text` (this machine = the test hosts) */
export function processesWith(text: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', text], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** The direct children of `pid`, with their command lines. */
export function childrenOf(pid: number): { pid: number; args: string }[] {
  let out: string;
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there is none
  }
  return out
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => Boolean(m))
    .map((m) => ({ pid: Number(m[1]), args: m[2] }));
}
