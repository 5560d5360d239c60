/**
 * Ctrl-C / SIGTERM against a real driver process (executePlan in a child `node` running the
 * TypeScript sources through the ts-loader fixture, see test/fixtures/runtime/run-plan.ts):
 * every task process is gone, the exit code is 130 / 143 within 3 s, and the run summary is
 * written.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { processesWith } from '../conformance/backend.conformance.js';
import { buildPlan, type SimpleTask } from './runtime-plan.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const driver = join(repo, 'test', 'fixtures', 'runtime', 'run-plan.ts');
const loader = join(repo, 'test', 'fixtures', 'ts-loader', 'register.js');
const root = mkdtempSync(join(tmpdir(), 'sflow-sig-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(fn: () => boolean, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function startDriver(tasks: SimpleTask[], extraArgs: string[] = []) {
  const runDir = join(root, `sig-${++n}`);
  const planFile = join(root, `plan-${n}.json`);
  writeFileSync(planFile, JSON.stringify(buildPlan(runDir, tasks, 'sigwf')));
  const child = spawn(process.execPath, ['--import', loader, driver, planFile, ...extraArgs], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: string | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  return { child, runDir, exited, output: () => output };
}

describe('signals (real driver process)', () => {
  it('Ctrl-C: background children of multi-line scripts are gone, exit 130 without a grace wait', async () => {
    const m = `${process.pid}${Math.floor(Math.random() * 1e6)}`;
    const d = startDriver(
      [
        { name: 'multi', script: `sleep 5${m} &\nsleep 5${m} &\necho started\nsleep 5${m}\necho done` },
        { name: 'nested', script: `( sleep 5${m} & ) ; bash -c "sleep 5${m}; echo inner" & wait` },
        { name: 'waiting', dependsOn: ['multi'], script: 'echo never' },
        // a grace far longer than the bound below: an exit inside it did not wait for a task
      ],
      ['--grace-ms', '120000'],
    );
    await until(() => processesWith(`5${m}`).length >= 5, 15_000, 'five sleepers');
    const t0 = Date.now();
    d.child.kill('SIGINT');
    const ex = await d.exited;
    expect(ex.code).toBe(130);
    expect(ex.at - t0).toBeLessThan(60_000);
    expect(processesWith(`5${m}`)).toEqual([]);
    expect(d.output()).toContain('⚠ Workflow cancelled');
    expect(d.output()).toContain(`Output folder: ${d.runDir}`);
    expect(d.output()).not.toMatch(/\n\s+at /); // no stack trace
    const summary = readFileSync(join(d.runDir, 'sflow_summary.log'), 'utf8');
    expect(summary).toMatch(/Status +: CANCELLED/);
    expect(summary).toContain('Counts   : CANCELLED=3');
    expect(readFileSync(join(d.runDir, 'sflow.log'), 'utf8')).toContain(
      'Received SIGINT; requesting shutdown',
    );
    // never started: its folder and empty log are made at the end of the run (runtime.md 8.3)
    expect(readFileSync(join(d.runDir, 'waiting', 'waiting.log'), 'utf8')).toBe('');
  }, 90_000);

  it('SIGTERM exits 143', async () => {
    const m = `${process.pid}${Math.floor(Math.random() * 1e6)}`;
    const d = startDriver([{ name: 'sleeper', script: `sleep 6${m}` }]);
    await until(() => processesWith(`6${m}`).length >= 1, 15_000, 'sleeper');
    d.child.kill('SIGTERM');
    const ex = await d.exited;
    expect(ex.code).toBe(143);
    expect(processesWith(`6${m}`)).toEqual([]);
  });

  it('a second Ctrl-C kills tasks that ignore SIGTERM without waiting for the grace', async () => {
    const m = `${process.pid}${Math.floor(Math.random() * 1e6)}`;
    const d = startDriver(
      [{ name: 'stubborn', script: `trap "" TERM INT; sleep 7${m} & while :; do sleep 0.1; done` }],
      ['--grace-ms', '120000'],
    );
    await until(() => processesWith(`7${m}`).length >= 1, 15_000, 'sleeper');
    d.child.kill('SIGINT');
    await sleep(300);
    const t0 = Date.now();
    d.child.kill('SIGINT');
    const ex = await d.exited;
    expect(ex.code).toBe(130);
    expect(ex.at - t0).toBeLessThan(60_000); // half the grace: it did not sit the grace out
    await until(() => processesWith(`7${m}`).length === 0, 3000, 'no sleeper left');
    expect(d.output()).toContain('again');
  }, 90_000);
});
