/**
 * A recipe regex with catastrophic backtracking (`re:^(a+)+$` against lines of 3,000 `a`s and a
 * `!`) cannot hang the driver (the real CLI, as users run it): the pattern is stopped at its
 * deadline and reported, the readiness probe fails at its own timeout, and Ctrl-C still ends the
 * run at once. Without the guard each of these runs would spin at 100 % CPU forever.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processesWith } from '../conformance/backend.conformance.js';
import { BIN } from '../helpers/cli.js';
import { onlyRunDir } from '../helpers/run-dir.js';
import { scratchDir } from '../helpers/scratch.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(fn: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function recipe(marker: string, timeout: number): string {
  return [
    'workflow:',
    '  name: redos',
    '  tasks:',
    '    - name: server',
    '      script:',
    // each line in one write: a check that lands between the a's and the '!' would see an
    // unterminated 'aaa…a', which the pattern matches at once (the last line is checked as it grows)
    `        - "l=$(printf 'a%.0s' $(seq 1 3000))'!'; for i in 1 2 3; do echo $l; done; sleep 30${marker}"`,
    '      probes:',
    '        readiness:',
    "          log_watch: {regex_pattern: 're:^(a+)+$'}",
    `          timeout: ${timeout}`,
    '          interval: 1',
    '    - name: client',
    '      depends_on: [server]',
    '      script: [echo never]',
    '',
  ].join('\n');
}

/** after a failed assertion: no driver, and none of its task processes, outlive the test */
function cleanUp(d: { child: ChildProcess; marker: string }): void {
  if (d.child.exitCode === null) d.child.kill('SIGKILL');
  for (const pid of processesWith(`30${d.marker}`)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

function start(timeout: number) {
  const marker = `${process.pid}${Math.floor(Math.random() * 1e6)}`;
  const cwd = scratchDir('sflow-redos-');
  writeFileSync(join(cwd, 'redos.yaml'), recipe(marker, timeout));
  const child = spawn(process.execPath, [BIN, 'run', '-f', 'redos.yaml'], {
    cwd,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const sflowLog = () => {
    try {
      const p = join(onlyRunDir(join(cwd, 'sflow_output')), 'sflow.log');
      return existsSync(p) ? readFileSync(p, 'utf8') : '';
    } catch {
      return '';
    }
  };
  return { child, exited, marker, output: () => output, sflowLog };
}

describe('a catastrophically backtracking log_watch pattern', () => {
  it('fails its readiness probe at the deadline, naming the pattern', async () => {
    const d = start(5);
    try {
      const code = await Promise.race([d.exited, sleep(90_000).then(() => 'stuck')]);
      expect(code, `driver still running or failed:\n${d.output()}`).toBe(1);
      expect(d.sflowLog()).toContain('catastrophic backtracking');
      expect(d.output()).toMatch(/server/);
      expect(d.output()).not.toMatch(/\n\s+at /);
      expect(processesWith(`30${d.marker}`)).toEqual([]);
    } finally {
      cleanUp(d);
    }
  }, 120_000);

  it('still lets Ctrl-C end the run (exit 130, nothing left)', async () => {
    const d = start(300);
    try {
      // the console's progress line for a service still waiting names the stopped pattern
      await until(() => d.output().includes('catastrophic backtracking'), 60_000, 'the stopped pattern');
      d.child.kill('SIGINT');
      const code = await Promise.race([d.exited, sleep(30_000).then(() => 'stuck')]);
      expect(code, d.output()).toBe(130);
      expect(processesWith(`30${d.marker}`)).toEqual([]);
    } finally {
      cleanUp(d);
    }
  }, 120_000);
});
