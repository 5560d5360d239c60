/**
 * Many run folders for `sflow results` tests and benches: one real run of the stand-in serving
 * sweep (test/fixtures/results/serving-sweep.yaml, four configurations TP × CONC) through the
 * built CLI is the template; each further run is that folder's records (ledger, run record,
 * recipe, results.json) copied under a new run id with the stand-in results replaced by values
 * the caller chooses. So every run folder has exactly the shape a real run writes.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, sflow } from './cli.js';

export const SERVING_SWEEP = join(REPO, 'test', 'fixtures', 'results', 'serving-sweep.yaml');

/** The stand-in's own figures for each configuration (as its script prints them). */
export function standInValues(tp: number, conc: number): { throughput_tok_s: number; ttft_ms: number } {
  return { throughput_tok_s: 1000 * tp + 10 * conc, ttft_ms: 50 + Math.floor((conc * 2) / tp) };
}

/** Runs the serving sweep once under `out`; returns the run folder. */
export function templateRun(out: string, extra: string[] = []): string {
  const r = sflow(['run', '-f', SERVING_SWEEP, '--output-dir', out, ...extra], { timeoutMs: 120_000 });
  if (r.code !== 0) throw new Error(`template run failed (${r.code}): ${r.stderr}`);
  const dirs = readdirSync(out).filter((d) => d.startsWith('serving_sweep-'));
  if (dirs.length !== 1) throw new Error(`expected one run folder in ${out}, found ${dirs.join(', ')}`);
  return join(out, dirs[0]);
}

/** A deterministic pseudo-random source in [0, 1) (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Task name → its values in one generated run (`bench_<TP>_<CONC>` → figures). */
export type ValuesOf = (task: string, tp: number, conc: number) => Record<string, number>;

/**
 * Writes a copy of `template` as run `runId` under `root` (the run folder `root/runId`), its
 * stand-in results replaced by `values`. Returns the new run folder.
 */
export function cloneRun(template: string, root: string, runId: string, values: ValuesOf): string {
  const oldId = template.split('/').pop()!;
  const dir = join(root, runId);
  mkdirSync(dir, { recursive: true });
  const swap = (text: string) => text.split(template).join(dir).split(oldId).join(runId);
  const valuesFor = (task: string) => {
    const m = /^bench_(\d+)_(\d+)$/.exec(task);
    return m ? values(task, Number(m[1]), Number(m[2])) : undefined;
  };
  const events = readFileSync(join(template, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const e = JSON.parse(swap(line)) as { type: string; task?: string; values?: Record<string, number> };
      const v = e.type === 'result_parsed' && e.task ? valuesFor(e.task) : undefined;
      if (v) e.values = v;
      return JSON.stringify(e);
    });
  writeFileSync(join(dir, 'events.jsonl'), events.join('\n') + '\n');
  const results = JSON.parse(readFileSync(join(template, 'results.json'), 'utf8')) as {
    tasks: Record<string, { values: Record<string, number> }>;
  };
  for (const [task, e] of Object.entries(results.tasks)) e.values = valuesFor(task) ?? e.values;
  writeFileSync(join(dir, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  writeFileSync(join(dir, 'sflow_run.json'), swap(readFileSync(join(template, 'sflow_run.json'), 'utf8')));
  writeFileSync(join(dir, 'sflow_recipe.yaml'), readFileSync(join(template, 'sflow_recipe.yaml')));
  return dir;
}

/**
 * `count` runs under `root`: each configuration's stand-in figures with uniform noise of ±`noise`
 * (0.02 = ±2 %), and `planted` (e.g. `{ task: 'bench_2_16', metric: 'throughput_tok_s',
 * factor: 0.9 }`) applied to one configuration.
 */
export function generateRuns(
  template: string,
  root: string,
  o: {
    count: number;
    prefix: string;
    seed: number;
    noise: number;
    planted?: { task: string; metric: string; factor: number };
  },
): string[] {
  const rnd = seeded(o.seed);
  const out: string[] = [];
  for (let i = 0; i < o.count; i++) {
    const id = `${o.prefix}-${String(i).padStart(4, '0')}`;
    out.push(
      cloneRun(template, root, id, (task, tp, conc) => {
        const v: Record<string, number> = standInValues(tp, conc);
        for (const k of Object.keys(v)) {
          const f = o.planted && o.planted.task === task && o.planted.metric === k ? o.planted.factor : 1;
          v[k] = Math.round(v[k] * f * (1 + (2 * rnd() - 1) * o.noise) * 1000) / 1000;
        }
        return v;
      }),
    );
  }
  return out;
}
