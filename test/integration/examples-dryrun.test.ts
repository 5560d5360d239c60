/**
 * Every recipe under ../shared/spec/examples dry-runs with exit 0, creates nothing, and the plan
 * shows the facts each file's header promises. The dry-runs go through the CLI's entry
 * in-process; one also runs the built CLI in a child process as the end-to-end check. Skipped
 * (named) when ../shared is absent.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { sflow } from '../helpers/cli.js';
import { sflowInProcess } from '../helpers/cli-inprocess.js';
import { describeWithShared, sharedPath } from '../helpers/shared.js';

const EX = sharedPath('spec', 'examples');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const dryArgs = (files: string[], extra: string[]) => [
  'run',
  ...files.flatMap((f) => ['-f', join(EX, f)]),
  '--dry-run',
  ...extra,
];

async function dry(
  files: string[],
  extra: string[] = [],
): Promise<{ code: number | null; out: string; err: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'sflow-ex-'));
  dirs.push(dir);
  const r = await sflowInProcess(dryArgs(files, extra), { cwd: dir });
  return { code: r.code, out: r.stdout, err: r.stderr, dir };
}

function taskBlock(out: string, name: string): string {
  const start = out.indexOf(`] ${name}\n`);
  expect(start, `task ${name} in plan`).toBeGreaterThan(0);
  const next = out.indexOf('\n  [', start + 1);
  return out.slice(start, next < 0 ? undefined : next);
}

describeWithShared('spec/examples', 'spec examples dry-run', () => {
  const files = readdirSync(EX).filter((f) => f.endsWith('.yaml'));
  it('finds the 11 single-file examples', () => expect(files.length).toBeGreaterThanOrEqual(11));

  it.each(files)('%s plans with exit 0 and creates nothing', async (f) => {
    const r = await dry([f]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('Configuration is valid');
    expect(readdirSync(r.dir)).toEqual([]);
  });

  it('end to end: the built CLI in a child process plans an example the same way', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sflow-ex-'));
    dirs.push(dir);
    const r = sflow(dryArgs(['02_dag_and_output_dirs.yaml'], []), { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Configuration is valid');
    expect(/Topological order: (.*)/.exec(r.stdout)![1].split(' → ')[0]).toBe('fetch');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('01: typed and computed variables render Python-style', async () => {
    const r = await dry(['01_hello_variables.yaml']);
    expect(r.out).toContain('echo "expr: Hello world x2 (strict=True)"');
    expect(r.out).toContain('computed: 4 / ${DOUBLE}');
    expect(r.out).toContain('typed: 2+2=4');
    const s = await dry(['01_hello_variables.yaml'], ['--set', 'GREETING=Hi', '--set', 'REPEAT=3']);
    expect(s.out).toContain('expr: Hi world x3 (strict=True)');
    expect(s.out).toContain('typed: 3+3=6');
  });

  it('02: topological order starts with fetch and ends with report; planned run dir', async () => {
    const r = await dry(['02_dag_and_output_dirs.yaml']);
    const order = /Topological order: (.*)/.exec(r.out)![1].split(' → ');
    expect(order[0]).toBe('fetch');
    expect(order.at(-1)).toBe('report');
    expect(r.out).toMatch(/workflow_output_dir \(planned, not created\): .*_dry_run/);
  });

  it('03: expressions over backend nodes and workflow variables', async () => {
    const r = await dry(['03_expressions.yaml']);
    for (const line of [
      'arith: 7 3 10 2.5 2 1',
      'minmax: 8 1',
      'nodes: localhost,localhost-1,localhost-2 count=3',
      'ips: 127.0.0.1,127.0.0.1,127.0.0.1',
      'cond: big port=8180',
      'concat: expressions-on-localhost-1',
      'defined: True False',
      'chain: 16 2',
      'head: 127.0.0.1 gpus=4',
    ]) {
      expect(r.out).toContain(line);
    }
    const s = await dry(['03_expressions.yaml'], ['--set', 'TP=2']);
    expect(s.out).toContain('chain: 8 1');
    expect(s.out).toContain('cond: small port=8000');
  });

  it('04: replica edges attach per policy', async () => {
    const r = await dry(['04_replicas.yaml']);
    expect(r.out).toContain('Tasks: 8');
    expect(taskBlock(r.out, 'merge')).toContain("depends_on: ['shard_0', 'shard_1', 'shard_2', 'epoch_2']");
    expect(taskBlock(r.out, 'epoch_1')).toContain("depends_on: ['epoch_0']");
    const one = await dry(['04_replicas.yaml'], ['--set', 'SHARDS=1']);
    expect(one.out).toContain('] shard_0\n');
    expect(one.out).not.toContain('] shard_1\n');
    const zero = await dry(['04_replicas.yaml'], ['--set', 'SHARDS=0']);
    expect(zero.code).toBe(1);
    expect(zero.err).toContain('replicas.count must be > 0');
  });

  it('05: Cartesian sweep names, chain order and --set list', async () => {
    const r = await dry(['05_sweep.yaml']);
    const names = [
      'bench_4_fast',
      'bench_4_slow',
      'bench_8_fast',
      'bench_8_slow',
      'bench_16_fast',
      'bench_16_slow',
    ];
    const order = /Topological order: (.*)/.exec(r.out)![1];
    expect(order).toContain(names.join(' → '));
    expect(taskBlock(r.out, 'collect')).toContain("depends_on: ['bench_16_slow']");
    expect(taskBlock(r.out, 'bench_8_slow')).toContain('sweep: CONC=8, MODE=slow');
    const s = await dry(['05_sweep.yaml'], ['--set', 'CONC=[1,2]']);
    expect(s.out).toContain('] bench_1_fast\n');
    expect(s.out).toContain('] bench_2_slow\n');
    expect(s.out).not.toContain('bench_4_fast');
  });

  it('06/07: readiness probes are planned with their hosts and patterns', async () => {
    const r = await dry(['06_service_readiness.yaml']);
    expect(taskBlock(r.out, 'static_site')).toMatch(/probe readiness: tcp_port 127\.0\.0\.1:18080/);
    expect(taskBlock(r.out, 'api')).toMatch(/probe readiness: http_get http:\/\/127\.0\.0\.1:18081\/health/);
    const w = await dry(['07_log_watch_readiness.yaml']);
    expect(taskBlock(w.out, 'watcher')).toMatch(/log_watch "re:.*" in pool\.log/);
    expect(taskBlock(w.out, 'pool')).toContain('match_count=3');
  });

  it('09: deprecated timeout warns at load', async () => {
    const r = await dry(['09_script_failures_and_retries.yaml']);
    expect(r.err + r.out).toMatch(/timeout.*not enforced/i);
    expect(taskBlock(r.out, 'flaky')).toContain('retries: ');
  });

  it('10: a dry-run never writes inline artifacts', async () => {
    const r = await dry(['10_outputs_and_artifacts.yaml']);
    expect(r.out).toMatch(/RUN_CONFIG: file:\/\/configs\/run\.json → .*configs\/run\.json \(inline content/);
    expect(existsSync(join(r.dir, 'sflow_output'))).toBe(false);
  });

  it('11: modular composition with --missable-tasks and required_by', async () => {
    const m = (f: string): string => join('11_modular', f);
    const a = await dry([m('base.yaml'), m('server.yaml'), m('bench.yaml')], ['-M', 'agg_server']);
    expect(a.code, a.err).toBe(0);
    expect(a.out).toContain('bench.depends_on: agg_server');
    expect(a.err).toMatch(
      /variables\.REQUESTS: overridden by .*bench\.yaml \(previously from .*base\.yaml\), value: 3 → 5/,
    );
    const c = await dry([m('base.yaml'), m('server.yaml'), m('bench.yaml')]);
    expect(c.code).toBe(1);
    expect(c.err).toContain("depends on unknown task 'agg_server'");
    // a command-line usage error: exit 2 (README's rule; the spec's table says 1, issue 25 chose 2)
    const d = await dry([m('bench.yaml')], ['-M', 'agg_server']);
    expect(d.code).toBe(2);
    expect(d.err).toContain('only valid with multiple input files');
    const e = await dry(
      [m('base.yaml'), m('server.yaml'), m('bench.yaml'), m('bench.yaml')],
      ['-M', 'agg_server'],
    );
    expect(e.code, e.err).toBe(0);
    const f = await dry([m('base.yaml'), m('server_attached.yaml'), m('bench_plain.yaml')]);
    expect(f.code, f.err).toBe(0);
    expect(taskBlock(f.out, 'bench')).toContain("depends_on: ['server']");
  });

  it('12: GPU slices, allocation map and oversubscription', async () => {
    const r = await dry(['12_gpu_slices_and_task_context.yaml']);
    expect(taskBlock(r.out, 'prefill_0')).toContain('CUDA_VISIBLE_DEVICES: 0,1');
    expect(taskBlock(r.out, 'prefill_1')).toContain('CUDA_VISIBLE_DEVICES: 2,3');
    expect(taskBlock(r.out, 'decode')).toMatch(/nodes: localhost-1\n[\s\S]*CUDA_VISIBLE_DEVICES: 0,1,2,3/);
    expect(taskBlock(r.out, 'router')).not.toContain('CUDA_VISIBLE_DEVICES: ');
    expect(r.out).toContain('Allocation map');
    const over = await dry(['12_gpu_slices_and_task_context.yaml'], ['--set', 'DECODE_GPUS=5']);
    expect(over.code).toBe(1);
    expect(over.err).toMatch(/decode/);
  });
});
