/**
 * A swept secret (issue 31 item 2): a secret variable with a two-value domain, swept together with
 * a plain one. Its values reach the tasks, but appear in no file of the run folder — events.jsonl,
 * handles.jsonl, sflow.log, sflow_summary.log, report.html, bash_cmds.log, sflow_recipe.yaml,
 * sflow_run.json, every task folder and log — in no file or folder name, and in no console line
 * (of the run and of its --dry-run): replicas are named `…_secret<k>` after the value's place in
 * the domain.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sflow } from '../helpers/cli.js';
import { onlyRunDir } from '../helpers/run-dir.js';
import { scratchDir } from '../helpers/scratch.js';

const VALUES = [`hfA-${process.pid}-5e0c1b77`, `hfB-${process.pid}-9d42aa01`];
const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

const RECIPE = `version: "0.1"
variables:
  HF_TOKEN:
    value: ${VALUES[0]}
    domain: [${VALUES.join(', ')}]
  BATCH:
    type: integer
    value: 8
    domain: [8, 64]
workflow:
  name: secsweep
  tasks:
    - name: bench
      replicas:
        variables: [BATCH, HF_TOKEN]
      script:
        - 'echo "batch $BATCH token $(printf %s "$HF_TOKEN" | sha256sum | cut -c1-16)"'
      result:
        batch: 'batch (\\d+)'
`;

/** every path under dir (files and folders, by name) and every file whose bytes hold needle */
function found(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name.includes(needle)) hits.push(`name: ${p}`);
    if (statSync(p).isDirectory()) hits.push(...found(p, needle));
    else if (readFileSync(p).includes(needle)) hits.push(p);
  }
  return hits;
}

describe('a swept secret variable', () => {
  it('reaches each replica, and is in no file, name or console line of the run', () => {
    const dir = scratchDir('sflow-secret-sweep-');
    writeFileSync(join(dir, 'r.yaml'), RECIPE);
    const env = { SFLOW_TASK_OUTPUT: 'always' };
    const dry = sflow(['run', '-f', 'r.yaml', '--dry-run'], { cwd: dir, env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('bench_64_secret1');
    const r = sflow(['run', '-f', 'r.yaml'], { cwd: dir, env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const runDir = onlyRunDir(join(dir, 'sflow_output'));
    const names = readdirSync(runDir)
      .filter((n) => n.startsWith('bench_'))
      .sort();
    expect(names).toEqual(['bench_64_secret0', 'bench_64_secret1', 'bench_8_secret0', 'bench_8_secret1']);
    // each replica got its own value (k = the value's place in the domain)
    for (const b of [8, 64])
      VALUES.forEach((v, k) => {
        const log = readFileSync(join(runDir, `bench_${b}_secret${k}`, `bench_${b}_secret${k}.log`), 'utf8');
        expect(log).toContain(`batch ${b} token ${hash(v)}`);
      });
    // the files the issue names are there, so the search below reads them
    for (const f of [
      'events.jsonl',
      'handles.jsonl',
      'sflow.log',
      'sflow_summary.log',
      'report.html',
      'bash_cmds.log',
      'sflow_recipe.yaml',
      'sflow_run.json',
      'results.json',
    ])
      expect(statSync(join(runDir, f)).size).toBeGreaterThan(0);
    expect(readFileSync(join(runDir, 'events.jsonl'), 'utf8')).toContain(
      '"sweep":{"BATCH":"64","HF_TOKEN":"secret1"}',
    );
    for (const v of VALUES) {
      expect(found(runDir, v)).toEqual([]);
      expect(r.stdout + r.stderr).not.toContain(v);
      expect(dry.stdout + dry.stderr).not.toContain(v);
    }
  }, 180_000);
});
