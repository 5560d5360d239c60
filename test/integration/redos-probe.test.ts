/**
 * A recipe regex with catastrophic backtracking (`re:^(a+)+$` against lines of 3,000 `a`s and a
 * `!`) cannot hang the driver (the real CLI, as users run it): the pattern is stopped at its
 * deadline and reported as such (console, summary, event); a readiness probe fails its task at
 * once, a failure probe fails it too unless `on_error: warn`, and Ctrl-C still ends the run at
 * once. Without the guard each of these runs would spin at 100 % CPU forever.
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

type Probe = { readiness: number } | { failure: 'fail' | 'warn' | undefined };

/** `server` writes lines the pattern backtracks on, then sleeps; `probe` is where the pattern is */
function recipe(marker: string, probe: Probe): string {
  const block =
    'readiness' in probe
      ? [
          '        readiness:',
          "          log_watch: {regex_pattern: 're:^(a+)+$'}",
          `          timeout: ${probe.readiness}`,
          '          interval: 1',
        ]
      : [
          '        failure:',
          "          log_watch: {regex_pattern: 're:^(a+)+$'}",
          '          interval: 1',
          ...(probe.failure ? [`          on_error: ${probe.failure}`] : []),
        ];
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
    ...block,
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

function start(probe: Probe) {
  const marker = `${process.pid}${Math.floor(Math.random() * 1e6)}`;
  const cwd = scratchDir('sflow-redos-');
  writeFileSync(join(cwd, 'redos.yaml'), recipe(marker, probe));
  const child = spawn(process.execPath, [BIN, 'run', '-f', 'redos.yaml'], {
    cwd,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const file = (name: string) => {
    try {
      const p = join(onlyRunDir(join(cwd, 'sflow_output')), name);
      return existsSync(p) ? readFileSync(p, 'utf8') : '';
    } catch {
      return '';
    }
  };
  return { child, exited, marker, output: () => output, sflowLog: () => file('sflow.log'), file };
}

/** what must hold wherever a probe's pattern hit the limit: console, summary and event say so */
function expectReported(d: ReturnType<typeof start>, role: 'readiness' | 'failure'): void {
  expect(d.output()).toMatch(
    new RegExp(
      `⚠ server: ${role} probe log_watch "re:\\^\\(a\\+\\)\\+\\$" stopped: .*catastrophic backtracking`,
    ),
  );
  expect(d.sflowLog()).toContain('catastrophic backtracking');
  const summary = d.file('sflow_summary.log');
  expect(summary).toMatch(new RegExp(`server +${role} +log_watch +\\[LIMIT\\]`));
  expect(summary).toContain('PROBE_LIMIT');
  const limited = d
    .file('events.jsonl')
    .split('\n')
    .filter((l) => l.includes('"type":"probe_result"') && l.includes('"limit"'));
  expect(limited.length).toBeGreaterThan(0);
  expect(JSON.parse(limited[0])).toMatchObject({ task: 'server', role, ok: false });
}

describe('a catastrophically backtracking log_watch pattern', () => {
  it('a readiness probe: stopped and reported, its task fails at once (not at its 300 s deadline)', async () => {
    const d = start({ readiness: 300 });
    try {
      const code = await Promise.race([d.exited, sleep(90_000).then(() => 'stuck')]);
      expect(code, `driver still running or failed:\n${d.output()}`).toBe(1);
      expectReported(d, 'readiness');
      expect(d.output()).toContain('readiness probe log_watch "re:^(a+)+$" cannot run:');
      expect(d.output()).not.toMatch(/\n\s+at /);
      expect(processesWith(`30${d.marker}`)).toEqual([]);
    } finally {
      cleanUp(d);
    }
  }, 120_000);

  it('a failure probe: stopped and reported, and the run fails (it no longer watches)', async () => {
    const d = start({ failure: undefined });
    try {
      const code = await Promise.race([d.exited, sleep(90_000).then(() => 'stuck')]);
      expect(code, `driver still running or failed:\n${d.output()}`).toBe(1);
      expectReported(d, 'failure');
      expect(d.output()).toContain('on_error: warn lets the task go on unwatched');
      expect(processesWith(`30${d.marker}`)).toEqual([]);
    } finally {
      cleanUp(d);
    }
  }, 120_000);

  it('a failure probe with on_error: warn: reported, the task goes on, Ctrl-C still ends the run', async () => {
    const d = start({ failure: 'warn' });
    try {
      await until(() => d.output().includes('catastrophic backtracking'), 60_000, 'the stopped pattern');
      expect(d.output()).toContain('on_error: warn, the task goes on unwatched');
      d.child.kill('SIGINT');
      const code = await Promise.race([d.exited, sleep(30_000).then(() => 'stuck')]);
      expect(code, d.output()).toBe(130);
      expectReported(d, 'failure');
      expect(processesWith(`30${d.marker}`)).toEqual([]);
    } finally {
      cleanUp(d);
    }
  }, 120_000);
});
