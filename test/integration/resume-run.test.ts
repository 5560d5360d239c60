/**
 * `sflow run --resume` through the built CLI with real processes: a sweep whose rows fail while a
 * marker file exists re-runs exactly those rows and their dependents once the marker is gone; a
 * changed recipe or variable is refused with the diff (and --force goes on); a run whose driver
 * is alive, or whose killed driver left attempts alive, is refused; the report shows both sessions.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, hasStackTrace, sflow } from '../helpers/cli.js';
import type { RunEvent } from '../../src/events/events.js';
import { parseEventsJsonl } from '../../src/reporters/events-jsonl.js';
import { groupState } from '../../src/util/process-liveness.js';
import { FAILING, ROWS, sweepRecipe } from '../helpers/resume-runs.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-resume-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

interface Fixture {
  dir: string;
  marks: string;
  recipe: string;
  env: NodeJS.ProcessEnv;
  run: (args: string[]) => ReturnType<typeof sflow>;
  runDir: () => string;
  runs: () => string[];
  events: () => RunEvent[];
}

function fixture(recipeText = sweepRecipe()): Fixture {
  const dir = join(root, `case-${++n}`);
  const marks = join(dir, 'marks');
  mkdirSync(marks, { recursive: true });
  const env = { MARKS: marks };
  const recipe = join(dir, 'r.yaml');
  writeFileSync(recipe, recipeText);
  const f: Fixture = {
    dir,
    marks,
    recipe,
    env,
    run: (args) => sflow(['run', ...args], { cwd: dir, env, timeoutMs: 120_000 }),
    runDir: () => {
      const out = join(dir, 'sflow_output');
      return join(out, readdirSync(out).filter((d) => !d.startsWith('_'))[0]);
    },
    runs: () => readFileSync(join(marks, 'runs.log'), 'utf8').trim().split('\n'),
    events: () => parseEventsJsonl(readFileSync(join(f.runDir(), 'events.jsonl'), 'utf8')),
  };
  return f;
}

const lastStatus = (events: RunEvent[]) => {
  const m = new Map<string, string>();
  for (const e of events) {
    if (e.type === 'task_finished') m.set(e.task, e.status);
    if (e.type === 'task_reused') m.set(e.task, `REUSED`);
  }
  return m;
};
const count = (xs: string[]) => xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<string, number>());

/** A first run with rows 3 and 6 failing (markers), checked. */
function failedFirstRun(f: Fixture): void {
  for (const r of FAILING) writeFileSync(join(f.marks, `fail_${r}`), '');
  const first = f.run(['-f', f.recipe]);
  expect(first.code, first.stderr).toBe(1);
  const st = lastStatus(f.events());
  for (const r of ROWS)
    if (FAILING.includes(r)) expect(['FAILED', 'CANCELLED']).toContain(st.get(`bench_${r}`));
    else expect(st.get(`bench_${r}`)).toBe('COMPLETED');
  expect(st.get('collect')).toBe('CANCELLED');
  for (const r of FAILING) rmSync(join(f.marks, `fail_${r}`));
}

describe('sflow run --resume', () => {
  it('re-runs exactly the failed rows and their dependents; results hold every row once; the report shows both sessions', () => {
    const f = fixture();
    failedFirstRun(f);
    const before = f.runs().length;
    const runDir = f.runDir();
    expect(existsSync(join(runDir, 'sflow_run.json'))).toBe(true);
    expect(existsSync(join(runDir, 'sflow_recipe.yaml'))).toBe(true);

    const r = f.run(['--resume', runDir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "↺ Resuming workflow 'rsweep' (session 2): 7 completed task(s) reused, 3 to run: bench_3, bench_6, collect",
    );
    // exactly the two rows and their dependent ran again; prep and the other rows did not
    expect(f.runs().slice(before).sort()).toEqual(['bench_3', 'bench_6', 'collect']);
    expect(count(f.runs()).get('prep')).toBe(1);
    for (const row of ROWS) expect(count(f.runs()).get(`bench_${row}`)).toBe(FAILING.includes(row) ? 2 : 1);

    // the results hold every row once, reused rows' values kept as written (floats stay floats)
    const results = readFileSync(join(runDir, 'results.json'), 'utf8');
    const doc = JSON.parse(results) as {
      tasks: Record<string, { status: string; values: { tput: number } }>;
    };
    expect(Object.keys(doc.tasks).sort()).toEqual(ROWS.map((x) => `bench_${x}`).sort());
    for (const row of ROWS)
      expect(doc.tasks[`bench_${row}`]).toMatchObject({ status: 'COMPLETED', values: { tput: row * 10 } });
    expect(results).toContain('"tput": 10.0');

    // one ledger: two sessions, reused tasks announced, attempt numbers continue
    const ev = f.events();
    expect(
      ev.filter((e) => e.type === 'run_started').map((e) => (e as { session?: number }).session ?? 1),
    ).toEqual([1, 2]);
    expect(
      ev
        .filter((e) => e.type === 'task_reused')
        .map((e) => (e as { task: string }).task)
        .sort(),
    ).toEqual(['prep', ...ROWS.filter((x) => !FAILING.includes(x)).map((x) => `bench_${x}`)].sort());
    const second = ev.slice(ev.findIndex((e) => e.type === 'run_started' && e.session === 2));
    expect(
      second
        .filter((e) => e.type === 'task_submitted')
        .map((e) => `${(e as { task: string }).task}#${(e as { attempt: number }).attempt}`)
        .sort(),
    ).toEqual(['bench_3#2', 'bench_6#2', 'collect#1']);
    const handles = readFileSync(join(runDir, 'handles.jsonl'), 'utf8');
    expect(handles).toContain('"task":"bench_3","attempt":2');
    expect(readFileSync(join(runDir, 'sflow_summary.log'), 'utf8')).toMatch(
      /Sessions : 1: .*; 2: .*\(resumed: 7 reused, 3 run\)/,
    );

    // report.html: both sessions' attempts (9 bars in the first: prep and 8 rows; 3 in the second)
    const html = readFileSync(join(runDir, 'report.html'), 'utf8');
    expect(html.match(/<rect class="bar /g)).toHaveLength(12);
    expect(html).toMatch(/<rect class="bar s-COMPLETED" data-task="bench_3" data-attempt="2"/);
    expect(html).toMatch(/<rect class="bar s-(FAILED|CANCELLED)" data-task="bench_3" data-attempt="1"/);
    expect(html).toContain('2 sessions (resumed)');
    expect(html).toContain('↺ session 2');
    expect(html).toMatch(/<tr data-session="2">/);

    // resuming a complete run does nothing
    const lines = readFileSync(join(runDir, 'events.jsonl'), 'utf8').length;
    const again = f.run(['--resume', runDir]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Nothing to resume');
    expect(readFileSync(join(runDir, 'events.jsonl'), 'utf8').length).toBe(lines);
  }, 120_000);

  it('a changed recipe or variable is refused with the diff; --force resumes with it', () => {
    const f = fixture();
    failedFirstRun(f);
    const runDir = f.runDir();
    const ledger = readFileSync(join(runDir, 'events.jsonl'), 'utf8');
    const before = f.runs().length;

    writeFileSync(f.recipe, sweepRecipe(' again'));
    const changed = f.run(['--resume', runDir, '-f', f.recipe]);
    expect(changed.code).toBe(1);
    expect(hasStackTrace(changed.stderr)).toBe(false);
    expect(changed.stderr).toContain('the recipe or its variables changed since it ran');
    expect(changed.stderr).toContain('-         - echo collect >> "$MARKS/runs.log"');
    expect(changed.stderr).toContain('+         - echo collect again >> "$MARKS/runs.log"');
    expect(changed.stderr).toContain('add --force');

    const vars = f.run(['--resume', runDir, '-s', 'ROW=[1,2,3]']);
    expect(vars.code).toBe(1);
    expect(vars.stderr).toContain('~ ROW domain: [1, 2, 3, 4, 5, 6, 7, 8] → [1, 2, 3]');
    // nothing ran, nothing was appended
    expect(readFileSync(join(runDir, 'events.jsonl'), 'utf8')).toBe(ledger);
    expect(f.runs()).toHaveLength(before);

    const forced = f.run(['--resume', runDir, '-f', f.recipe, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain('resumed with --force although the recipe or its variables changed');
    expect(f.runs().slice(before).sort()).toEqual(['bench_3', 'bench_6', 'collect again']);
    // the record now says what the run ran last
    expect(readFileSync(join(runDir, 'sflow_recipe.yaml'), 'utf8')).toContain('echo collect again');
    expect(readFileSync(join(runDir, 'events.jsonl'), 'utf8')).toContain('"forced":true');
  }, 120_000);

  it('usage: --force needs --resume; a folder that is not a run is refused', () => {
    const f = fixture();
    const force = f.run(['-f', f.recipe, '--force']);
    expect(force.code).toBe(2);
    expect(force.stderr).toContain('--force is only meaningful with --resume');
    const notRun = f.run(['--resume', f.dir]);
    expect(notRun.code).toBe(2);
    expect(notRun.stderr).toContain('is not an sflow run directory (no events.jsonl)');
    expect(hasStackTrace(notRun.stderr + force.stderr)).toBe(false);
  });
});

describe('sflow run --resume while the earlier run still runs', () => {
  it('refuses while its driver is alive, then while a killed driver left attempts alive; resumes once they are gone', async () => {
    const f = fixture(`version: "0.1"
workflow:
  name: longrun
  tasks:
    - name: wait
      script:
        - trap '' TERM
        - echo wait >> "$MARKS/runs.log"
        - while [ ! -e "$MARKS/go" ]; do sleep 0.1; done
    - name: after
      depends_on: [wait]
      script:
        - echo after >> "$MARKS/runs.log"
`);
    const driver = spawn(process.execPath, [BIN, 'run', '-f', f.recipe], {
      cwd: f.dir,
      env: { ...process.env, ...f.env, NO_COLOR: '1' },
      stdio: 'ignore',
    });
    const exited = new Promise((r) => driver.once('exit', r));
    let pgid = 0;
    try {
      // the task runs: its process group is in the handle ledger
      const deadline = Date.now() + 60_000;
      for (;;) {
        const ledger = join(f.dir, 'sflow_output');
        const handles =
          existsSync(ledger) && readdirSync(ledger).length ? join(f.runDir(), 'handles.jsonl') : '';
        const line = handles && existsSync(handles) ? readFileSync(handles, 'utf8').split('\n')[0] : '';
        if (line) {
          pgid = (JSON.parse(line) as { handle: { process: { pgid: number } } }).handle.process.pgid;
          break;
        }
        if (Date.now() > deadline) throw new Error('the task never started');
        await new Promise((r) => setTimeout(r, 100));
      }
      const runDir = f.runDir();
      const alive = f.run(['--resume', runDir]);
      expect(alive.code).toBe(1);
      // its driver holds the run folder's lock (one driver per run folder)
      expect(alive.stderr).toContain(
        `cannot resume ${runDir}: another sflow drives this run folder: pid ${driver.pid} on `,
      );

      // the killed driver's launcher stops its attempts (TERM, 5 s grace, KILL): this one ignores
      // TERM, so it outlives the driver for the grace
      driver.kill('SIGKILL');
      await exited;
      expect(groupState(pgid)).toBe('alive');
      const orphan = f.run(['--resume', runDir]);
      expect(orphan.code).toBe(1);
      // refused either way: by the attempt still alive, or (when the killed driver's reaper is
      // already at work, as on a loaded machine) by the reaper's hold on the run folder
      expect(orphan.stderr).toMatch(
        new RegExp(
          `attempts of the earlier run are still alive: wait attempt 1 \\(process group ${pgid}\\)|` +
            `another sflow drives this run folder: pid \\d+ on \\S+ \\(sflow recover`,
        ),
      );

      process.kill(-pgid, 'SIGKILL');
      const gone = Date.now() + 30_000;
      while (groupState(pgid) === 'alive' && Date.now() < gone) await new Promise((r) => setTimeout(r, 50));
      // the reaper lets go of the run folder once the attempt is gone (it records the lost
      // driver's end first: on a loaded machine that has taken over 30 s)
      const released = Date.now() + 120_000;
      while (existsSync(join(runDir, '.sflow.lock')) && Date.now() < released)
        await new Promise((r) => setTimeout(r, 50));
      writeFileSync(join(f.marks, 'go'), '');
      const r = f.run(['--resume', runDir]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('0 completed task(s) reused, 2 to run: wait, after');
      expect(f.runs()).toEqual(['wait', 'wait', 'after']);
      const ev = f.events();
      expect(ev.some((e) => e.type === 'task_submitted' && e.task === 'wait' && e.attempt === 2)).toBe(true);
      // the killed session was marked as ended by a lost driver (before the resumed one started)
      const ends = ev.filter((e) => e.type === 'run_finished');
      expect(ends).toHaveLength(2);
      expect(JSON.stringify(ends[0])).toContain('ended by a lost driver');
    } finally {
      driver.kill('SIGKILL');
      try {
        if (pgid) process.kill(-pgid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }, 240_000);
});
