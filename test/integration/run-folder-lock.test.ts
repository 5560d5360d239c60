/**
 * One driver per run folder (issue 24 item 4), with the built CLI and real processes: two
 * `sflow run --resume DIR` started at the same moment — exactly one runs what is left, the other
 * is refused naming the holder, and the ledger gets one more session, not two; `sflow recover DIR`
 * during a resume is refused the same way; a lock whose driver is gone (SIGKILL) is taken over; the
 * lock goes with its holder on every path (a normal end, a refusal).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { until } from '../conformance/procs.js';
import { BIN, sflow } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch.js';

const LOCK = '.sflow.lock';

/** `b` fails while marks/fail exists; when resumed it takes a while, so two resumes overlap */
const RECIPE = `version: "0.1"
workflow:
  name: lockme
  tasks:
    - name: a
      script:
        - echo a >> "$MARKS/runs.log"
    - name: b
      depends_on: [a]
      script:
        - echo b >> "$MARKS/runs.log"
        - 'if [ -e "$MARKS/fail" ]; then exit 1; fi'
        - 'while [ -e "$MARKS/hold" ]; do sleep 0.1; done'
`;

interface Case {
  dir: string;
  marks: string;
  env: NodeJS.ProcessEnv;
  runDir: string;
}

/** the first run, with b failing; afterwards b succeeds (and waits while marks/hold exists) */
function failedRun(): Case {
  const dir = scratchDir('sflow-lock-');
  const marks = join(dir, 'marks');
  mkdirSync(marks);
  writeFileSync(join(dir, 'r.yaml'), RECIPE);
  const env = { MARKS: marks, SFLOW_RUN_INDEX_DIR: join(dir, 'index') };
  writeFileSync(join(marks, 'fail'), '');
  const first = sflow(['run', '-f', 'r.yaml'], { cwd: dir, env, timeoutMs: 120_000 });
  expect(first.code, first.stderr).toBe(1);
  rmSync(join(marks, 'fail'));
  const out = join(dir, 'sflow_output');
  return { dir, marks, env, runDir: join(out, readdirSync(out)[0]) };
}

function start(c: Case, args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: c.dir,
    env: { ...process.env, NO_COLOR: '1', ...c.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (out += String(d)));
  const done = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { child, done, out: () => out };
}

const count = (runDir: string, type: string) =>
  readFileSync(join(runDir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.includes(`"type":"${type}"`)).length;

describe('one driver per run folder', () => {
  it('two resumes started at once: one runs, the other is refused naming it; one new session', async () => {
    for (let trial = 0; trial < 3; trial++) {
      const c = failedRun();
      writeFileSync(join(c.marks, 'hold'), '');
      const both = [start(c, ['run', '--resume', c.runDir]), start(c, ['run', '--resume', c.runDir])];
      // the refused one ends on its own; then the winner may finish
      const first = await Promise.race(both.map((r, i) => r.done.then((code) => ({ i, code }))));
      rmSync(join(c.marks, 'hold'));
      const codes = await Promise.all(both.map((r) => r.done));
      const loser = both[first.i];
      const winner = both[1 - first.i];
      expect(first.code, loser.out()).toBe(1);
      expect(codes[1 - first.i], winner.out()).toBe(0);
      expect(loser.out()).toContain(
        `cannot resume ${c.runDir}: another sflow drives this run folder: pid ${winner.child.pid} on ${hostname()} (sflow run --resume, since `,
      );
      expect(loser.out()).not.toMatch(/\n\s+at /);
      // b ran once in the first run and once more in exactly one resume
      expect(readFileSync(join(c.marks, 'runs.log'), 'utf8').trim().split('\n')).toEqual(['a', 'b', 'b']);
      expect(count(c.runDir, 'run_started')).toBe(2);
      expect(count(c.runDir, 'run_finished')).toBe(2);
      expect(existsSync(join(c.runDir, LOCK))).toBe(false);
    }
  }, 300_000);

  it('sflow recover DIR while a resume drives it: refused, naming the resume', async () => {
    const c = failedRun();
    writeFileSync(join(c.marks, 'hold'), '');
    const resume = start(c, ['run', '--resume', c.runDir]);
    try {
      await until(() => existsSync(join(c.runDir, LOCK)), 60_000, 'the resume to take the lock');
      const r = sflow(['recover', c.runDir], { cwd: c.dir, env: c.env });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(
        new RegExp(`another sflow drives this run folder: pid ${resume.child.pid} on .*sflow run --resume`),
      );
    } finally {
      rmSync(join(c.marks, 'hold'), { force: true });
    }
    expect(await resume.done, resume.out()).toBe(0);
    expect(existsSync(join(c.runDir, LOCK))).toBe(false);
  }, 180_000);

  it('a lock whose driver is gone is taken over; a refused resume leaves no lock behind', () => {
    const c = failedRun();
    // a driver that no longer runs (its pid is gone) left its lock
    const dead = spawnSync('true');
    expect(dead.pid).toBeGreaterThan(0);
    writeFileSync(
      join(c.runDir, LOCK),
      JSON.stringify({
        v: 1,
        driver: `${hostname()}:${dead.pid}:1`,
        command: 'sflow run --resume',
        since: '2020-01-01T00:00:00.000Z',
        nonce: 'deadbeef',
      }) + '\n',
    );
    // refused for another reason (a changed recipe): the lock it took is released on that path too
    writeFileSync(join(c.dir, 'changed.yaml'), RECIPE.replace('echo a >>', 'echo A >>'));
    const refused = sflow(['run', '--resume', c.runDir, '-f', 'changed.yaml'], { cwd: c.dir, env: c.env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('changed since it ran');
    expect(existsSync(join(c.runDir, LOCK))).toBe(false);
    const r = sflow(['run', '--resume', c.runDir], { cwd: c.dir, env: c.env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(c.runDir, LOCK))).toBe(false);
    // a live holder of another host is never taken over: refused with what to do
    writeFileSync(
      join(c.runDir, LOCK),
      JSON.stringify({
        v: 1,
        driver: 'elsewhere.example:4242:7',
        command: 'sflow run',
        since: 'x',
        nonce: 'n',
      }),
    );
    const other = sflow(['recover', c.runDir], { cwd: c.dir, env: c.env });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('pid 4242 on elsewhere.example (sflow run, since x)');
    expect(other.stderr).toContain(`once it is gone there, remove ${join(c.runDir, LOCK)}`);
  }, 180_000);
});
