/** Run the built CLI (`node bin/sflow.js …`) as a user would, with a deadline. */
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export { SHARED } from './shared.js';
export const BIN = join(REPO, 'bin', 'sflow.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function sflow(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: opts.cwd ?? REPO,
    env: { ...process.env, NO_COLOR: '1', ...opts.env },
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** A user error is printed without a JS stack trace. */
export function hasStackTrace(text: string): boolean {
  return /\n\s+at .+\(.*:\d+:\d+\)/.test(text) || /\n\s+at file:\/\//.test(text);
}
