/**
 * `sflow results collect|query|compare|diff` through the built CLI on run folders of the stand-in
 * serving sweep (test/helpers/results-runs.ts: one real run, copies with chosen figures).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hasStackTrace, sflow } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch.js';
import { cloneRun, generateRuns, standInValues, templateRun } from '../helpers/results-runs.js';
import { MONITOR_ENV } from '../helpers/monitored-run.js';
import { onlyRunDir } from '../helpers/run-dir.js';

let template: string;
let work: string;

beforeAll(() => {
  work = scratchDir('sflow-results-');
  template = templateRun(join(work, 'out'));
}, 180_000);

const json = <T>(text: string) => JSON.parse(text) as T;

describe('collect and query', () => {
  it('one row per task instance: run, backend, variables with the sweep values, status, results', () => {
    const table = join(work, 'table1');
    const r = sflow(['results', 'collect', join(work, 'out'), '-d', table]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/1 new or changed run\(s\), 4 row\(s\)/);
    for (const f of ['results.parquet', 'results.csv', 'results.jsonl'])
      expect(existsSync(join(table, f))).toBe(true);
    const q = sflow([
      'results',
      'query',
      'SELECT task, base_task, backend, var_TP, var_CONC, var_MODEL, status, attempts, result_throughput_tok_s, result_ttft_ms, run_id, workflow, recipe_digest FROM results ORDER BY task',
      '-d',
      table,
      '--format',
      'json',
    ]);
    expect(q.code, q.stderr).toBe(0);
    const rows = json<Record<string, unknown>[]>(q.stdout);
    expect(rows.map((x) => x.task)).toEqual(['bench_1_16', 'bench_1_8', 'bench_2_16', 'bench_2_8']);
    const runId = template.split('/').pop();
    for (const x of rows) {
      const [tp, conc] = String(x.task).split('_').slice(1).map(Number);
      expect(x).toMatchObject({
        base_task: 'bench',
        backend: 'local',
        var_TP: tp,
        var_CONC: conc,
        var_MODEL: 'stand-in',
        status: 'COMPLETED',
        attempts: 1,
        result_throughput_tok_s: standInValues(tp, conc).throughput_tok_s,
        result_ttft_ms: standInValues(tp, conc).ttft_ms,
        run_id: runId,
        workflow: 'serving_sweep',
      });
      expect(x.recipe_digest).toMatch(/^[0-9a-f]{16}$/);
    }
    const csv = readFileSync(join(table, 'results.csv'), 'utf8').split('\n');
    expect(csv[0].split(',')).toContain('result_throughput_tok_s');
    expect(csv.filter(Boolean)).toHaveLength(5);
  });

  it('collecting again adds nothing and rewrites nothing; a new run is the only one read', () => {
    const root = join(work, 'incremental');
    for (let i = 0; i < 3; i++)
      cloneRun(template, root, `inc-${i}`, (_t, tp, conc) => standInValues(tp, conc));
    const table = join(work, 'table2');
    expect(sflow(['results', 'collect', root, '-d', table]).stdout).toMatch(
      /3 new or changed run\(s\), 12 row\(s\)/,
    );
    const before = statSync(join(table, 'results.parquet')).mtimeMs;
    const again = sflow(['results', 'collect', root, '-d', table]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/nothing new; 3 run\(s\) found; the table has 12 row\(s\)/);
    expect(statSync(join(table, 'results.parquet')).mtimeMs).toBe(before);
    cloneRun(template, root, 'inc-3', (_t, tp, conc) => standInValues(tp, conc));
    const more = sflow(['results', 'collect', root, '-d', table]);
    expect(more.stdout).toMatch(
      /1 new or changed run\(s\), 4 row\(s\); 4 run\(s\) found; the table has 16 row\(s\)/,
    );
    const q = sflow([
      'results',
      'query',
      'SELECT count(DISTINCT run_id) AS runs FROM results',
      '-d',
      table,
      '--format',
      'csv',
    ]);
    expect(q.stdout).toBe('runs\n4\n');
  });

  it('prints a table, escapes control characters, and reports bad SQL and a missing table without a stack', () => {
    const table = join(work, 'table1');
    const t = sflow(['results', 'query', "SELECT 'a' || chr(27) || '[2J' AS x, 1.5 AS y", '-d', table]);
    expect(t.code).toBe(0);
    expect(t.stdout).toContain('a\\x1b[2J');
    expect(t.stdout).not.toContain('\x1b');
    expect(t.stdout).toMatch(/\(1 row\)/);
    const bad = sflow(['results', 'query', 'SELEC nope', '-d', table]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/✗ Usage error: the query failed: .*syntax error/i);
    expect(hasStackTrace(bad.stderr)).toBe(false);
    const none = sflow(['results', 'query', 'SELECT 1', '-d', join(work, 'nothing-here')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no collected table .*\n.*sflow results collect/);
    const empty = sflow(['results', 'collect', join(work, 'table1'), '-d', join(work, 'table-x')]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no sflow run found/);
  });
});

describe('compare', () => {
  it('groups by the variables that differ, picks the best and the Pareto front of two metrics', () => {
    const r = sflow([
      'results',
      'compare',
      join(work, 'out'),
      '-m',
      'throughput_tok_s:max',
      '-m',
      'ttft_ms:min',
      '--format',
      'json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const rep = json<{
      variables: string[];
      best: { config: string };
      front: { config: string }[];
      points: { config: string; metrics: number[] }[];
    }>(r.stdout);
    expect(rep.variables).toEqual(['CONC', 'TP']);
    expect(rep.points).toHaveLength(4);
    expect(rep.best.config).toBe('serving_sweep/bench CONC=16 TP=2');
    // (1080, 66) (1160, 82) (2080, 58) (2160, 66): only TP=2 is on the front
    expect(rep.front.map((p) => p.config)).toEqual([
      'serving_sweep/bench CONC=8 TP=2',
      'serving_sweep/bench CONC=16 TP=2',
    ]);
    const text = sflow(['results', 'compare', join(work, 'out'), '-m', 'throughput_tok_s', '-m', 'ttft_ms']);
    expect(text.stdout).toMatch(/throughput_tok_s \(max, guessed\)/);
    expect(text.stdout).toMatch(/ttft_ms \(min, guessed\)/);
    expect(text.stdout).toMatch(/best by throughput_tok_s \(max\): serving_sweep\/bench CONC=16 TP=2 = 2160/);
    const unknown = sflow(['results', 'compare', join(work, 'out'), '-m', 'nope:max']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no metric 'nope' .*result fields: throughput_tok_s, ttft_ms/);
  });
});

describe('diff on 200 runs', () => {
  const planted = { task: 'bench_2_16', metric: 'throughput_tok_s', factor: 0.9 };
  let base: string;

  beforeAll(() => {
    base = join(work, 'base');
    generateRuns(template, base, { count: 100, prefix: 'base', seed: 1, noise: 0.02 });
  }, 120_000);

  it('flags exactly the planted 10 % regression, names both sides, and exits 1', () => {
    const cand = join(work, 'cand-planted');
    generateRuns(template, cand, { count: 100, prefix: 'cand', seed: 2, noise: 0.02, planted });
    const r = sflow(['results', 'diff', base, cand]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const regressions = r.stdout.split('\n').filter((l) => l.startsWith('✗ regression:'));
    expect(regressions).toHaveLength(1);
    expect(regressions[0]).toMatch(/serving_sweep\/bench CONC=16 TP=2 throughput_tok_s -\d+\.\d%/);
    expect(r.stdout).toMatch(new RegExp(`base run: +${base}/base-\\d{4} \\(median of 100 runs\\)`));
    expect(r.stdout).toMatch(new RegExp(`candidate run: +${cand}/cand-\\d{4} \\(median of 100 runs\\)`));
    expect(r.stdout).toMatch(/✗ 1 regression\(s\)/);
    const j = sflow(['results', 'diff', base, cand, '--format', 'json']);
    const rep = json<{ lines: { config: string; metric: string; verdict: string; relative: number }[] }>(
      j.stdout,
    );
    expect(rep.lines).toHaveLength(8);
    const flagged = rep.lines.filter((l) => l.verdict !== 'unchanged');
    expect(flagged.map((l) => [l.config, l.metric, l.verdict])).toEqual([
      ['serving_sweep/bench CONC=16 TP=2', 'throughput_tok_s', 'regression'],
    ]);
    expect(flagged[0].relative).toBeGreaterThan(-0.12);
    expect(flagged[0].relative).toBeLessThan(-0.08);
  });

  it('without the planted regression (same noise) exits 0', () => {
    const cand = join(work, 'cand-clean');
    generateRuns(template, cand, { count: 100, prefix: 'cand', seed: 3, noise: 0.02 });
    const r = sflow(['results', 'diff', base, cand]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/✓ no regression \(8 comparisons\)/);
    expect(r.stdout).not.toMatch(/regression:/);
  });

  it('reads collected tables too, and a metric named with its direction', () => {
    const cand = join(work, 'cand-planted');
    const tb = join(work, 'tb');
    const tc = join(work, 'tc');
    expect(sflow(['results', 'collect', base, '-d', tb]).code).toBe(0);
    expect(sflow(['results', 'collect', cand, '-d', tc]).code).toBe(0);
    const r = sflow(['results', 'diff', tb, tc, '-m', 'ttft_ms:min']);
    expect(r.code, r.stdout).toBe(0);
    const t = sflow(['results', 'diff', tb, tc, '-m', 'throughput_tok_s:max']);
    expect(t.code).toBe(1);
    expect(t.stdout).toMatch(/✗ regression: serving_sweep\/bench CONC=16 TP=2 throughput_tok_s/);
  });
});

describe('monitor figures', () => {
  it("a monitored task's row carries its windowed report's summary (avg and max per metric)", () => {
    const dir = join(work, 'monitored');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'r.yaml'),
      `version: "0.1"
workflow:
  name: monitored_bench
  tasks:
    - name: load
      resources: { gpus: { count: 2 } }
      script:
        - sleep 1
        - echo "BENCH START"
        - sleep 2
        - echo "BENCH END"
        - sleep 1
      monitor:
        interval: 500
        window: { start: "BENCH START", end: "BENCH END" }
        report: { format: [csv] }
    - name: plain
      script: ["true"]
`,
    );
    const r = sflow(['run', '-f', 'r.yaml'], { cwd: dir, env: MONITOR_ENV, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const table = join(work, 'table-mon');
    expect(sflow(['results', 'collect', join(dir, 'sflow_output'), '-d', table]).code).toBe(0);
    const q = sflow([
      'results',
      'query',
      'SELECT * FROM results ORDER BY task',
      '-d',
      table,
      '--format',
      'json',
    ]);
    const rows = JSON.parse(q.stdout) as Record<string, unknown>[];
    const load = rows.find((x) => x.task === 'load')!;
    const plain = rows.find((x) => x.task === 'plain')!;
    const run = onlyRunDir(join(dir, 'sflow_output'));
    const windowed = join(run, 'sflow_monitor', 'windowed');
    const [view] = readdirSync(windowed);
    const summary = readFileSync(join(windowed, view, 'summary.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1);
    expect(summary.length).toBeGreaterThan(2);
    for (const line of summary) {
      const f = line.split(',');
      const key = `mon_${f[0]}_${f[1]}`.replace(/[^A-Za-z0-9_]/g, '_');
      expect(load[`${key}_avg`], key).toBe(Number(f[f.length - 2]));
      expect(load[`${key}_max`], key).toBe(Number(f[f.length - 1]));
      expect(plain[`${key}_avg`]).toBeNull();
    }
    expect(load.gpus).toBe(2);
  }, 180_000);
});
