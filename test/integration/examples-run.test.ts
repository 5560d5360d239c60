/**
 * Every recipe under ../shared/spec/examples runs on the local backend with the outcome its header
 * states: exit code, task states, log lines, files. Real processes, real sockets. The runs go
 * through the CLI's entry in-process; one also runs the built CLI in a child process as the
 * end-to-end check. Skipped (named) when ../shared is absent.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { sflow, type CliResult } from '../helpers/cli.js';
import { sflowInProcess } from '../helpers/cli-inprocess.js';
import { onlyRunDir, readJson, taskLog, taskTable } from '../helpers/run-dir.js';
import { describeWithShared, sharedPath } from '../helpers/shared.js';

const EX = sharedPath('spec', 'examples');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function withRunDir(r: CliResult, cwd: string): CliResult & { runDir: string; cwd: string } {
  let runDir = '';
  try {
    runDir = onlyRunDir(join(cwd, 'sflow_output'));
  } catch {
    /* no run dir */
  }
  return { ...r, runDir, cwd };
}

const runArgs = (files: string[], extra: string[]) => [
  'run',
  ...files.flatMap((f) => ['-f', join(EX, f)]),
  ...extra,
];

function tempCwd(): string {
  const cwd = mkdtempSync(join(tmpdir(), 'sflow-run-'));
  dirs.push(cwd);
  return cwd;
}

async function run(
  files: string[],
  extra: string[] = [],
): Promise<CliResult & { runDir: string; cwd: string }> {
  const cwd = tempCwd();
  return withRunDir(await sflowInProcess(runArgs(files, extra), { cwd }), cwd);
}

function statuses(runDir: string): Record<string, string> {
  return Object.fromEntries(Object.entries(taskTable(runDir)).map(([k, v]) => [k, v.status]));
}

const SLOW = { sequential: true, timeout: 120_000 };

describeWithShared('spec/examples', 'spec examples run on the local backend', SLOW, () => {
  it('01 hello variables: Python-style rendering in ${{ }} and in the environment', async () => {
    const r = await run(['01_hello_variables.yaml']);
    expect(r.code, r.stderr).toBe(0);
    const log = taskLog(r.runDir, 'greet');
    expect(log).toContain(
      'expr: Hello world x2 (strict=True)\nenv:  Hello world x2 (strict=True)\ncomputed: 4 / 4\ntyped: 2+2=4',
    );
    const s = await run(['01_hello_variables.yaml'], ['--set', 'GREETING=Hi', '--set', 'REPEAT=3']);
    expect(taskLog(s.runDir, 'greet')).toContain('expr: Hi world x3 (strict=True)');
    expect(taskLog(s.runDir, 'greet')).toContain('computed: 6 / 6');
    const bad = await run(['01_hello_variables.yaml'], ['--set', 'NOT_DECLARED=1']);
    expect(bad.code).toBe(2); // a -s naming what the recipe lacks is a usage error
    expect(bad.stderr).toContain('not defined in the configuration');
    expect(existsSync(join(bad.cwd, 'sflow_output'))).toBe(false);
    const cast = await run(['01_hello_variables.yaml'], ['--set', 'REPEAT=abc']);
    expect(cast.code).toBe(1);
    expect(cast.stderr).toContain('expected integer');
  });

  it('end to end: the built CLI in a child process runs an example the same way', () => {
    const cwd = tempCwd();
    const r = withRunDir(
      sflow(runArgs(['02_dag_and_output_dirs.yaml'], []), { cwd, timeoutMs: 90_000 }),
      cwd,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(taskLog(r.runDir, 'report')).toContain('words=9 lines=3');
  });

  it('02 diamond DAG and output dirs', async () => {
    const r = await run(['02_dag_and_output_dirs.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(statuses(r.runDir)).toEqual({
      fetch: 'COMPLETED',
      count_words: 'COMPLETED',
      count_lines: 'COMPLETED',
      report: 'COMPLETED',
    });
    expect(existsSync(join(r.runDir, 'corpus.txt'))).toBe(true);
    expect(readFileSync(join(r.runDir, 'count_words', 'words.txt'), 'utf8').trim()).toBe('9');
    expect(readFileSync(join(r.runDir, 'count_lines', 'lines.txt'), 'utf8').trim()).toBe('3');
    expect(taskLog(r.runDir, 'report')).toContain('words=9 lines=3');
    expect(existsSync(join(r.runDir, 'sflow.log'))).toBe(true);
  });

  it('03 expressions', async () => {
    const r = await run(['03_expressions.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(taskLog(r.runDir, 'show')).toBe(
      [
        'arith: 7 3 10 2.5 2 1',
        'minmax: 8 1',
        'nodes: localhost,localhost-1,localhost-2 count=3',
        'ips: 127.0.0.1,127.0.0.1,127.0.0.1',
        'cond: big port=8180',
        'concat: expressions-on-localhost-1',
        'defined: True False',
        'chain: 16 2',
        'head: 127.0.0.1 gpus=4',
        '',
      ].join('\n'),
    );
  });

  it('04 replicas: parallel and sequential edges', async () => {
    const r = await run(['04_replicas.yaml']);
    expect(r.code, r.stderr).toBe(0);
    const st = statuses(r.runDir);
    expect(Object.keys(st)).toHaveLength(8);
    expect(Object.values(st).every((s) => s === 'COMPLETED')).toBe(true);
    expect(taskLog(r.runDir, 'merge')).toContain('shards=0,1,2 epochs=0,1,2');
    const one = await run(['04_replicas.yaml'], ['--set', 'SHARDS=1']);
    expect(taskLog(one.runDir, 'merge')).toContain('shards=0 epochs=0,1,2');
  });

  it('05 sweeps: per-replica environment, default value in ${{ }}', async () => {
    const r = await run(['05_sweep.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(taskLog(r.runDir, 'bench_8_slow')).toContain('env CONC=8 MODE=slow idx=3 | expr CONC=4 MODE=fast');
    expect(taskLog(r.runDir, 'collect')).toContain('4:fast 4:slow 8:fast 8:slow 16:fast 16:slow');
    const s = await run(['05_sweep.yaml'], ['--set', 'CONC=[1,2]']);
    expect(Object.keys(statuses(s.runDir))).toEqual(
      expect.arrayContaining(['bench_1_fast', 'bench_1_slow', 'bench_2_fast', 'bench_2_slow']),
    );
  });

  it('06 services gated by tcp and http readiness, torn down at the end', async () => {
    const r = await run(['06_service_readiness.yaml']);
    expect(r.code, r.stderr).toBe(0);
    const log = taskLog(r.runDir, 'client');
    expect(log).toContain('site says: hello from static_site');
    expect(log).toContain('api says: ok');
    const st = statuses(r.runDir);
    expect(st.client).toBe('COMPLETED');
    expect(st.api).toBe('READY');
    expect(st.static_site).toBe('READY');
  });

  it('07 log_watch readiness: literal, match_count, re:, logger', async () => {
    const r = await run(['07_log_watch_readiness.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(taskLog(r.runDir, 'client')).toContain('pool and watcher are ready');
  });

  it('08 failure probe cancels everything', async () => {
    const r = await run(['08_failure_probe_cancels.yaml']);
    expect(r.code).toBe(1);
    expect(r.stderr + r.stdout).toMatch(/failure_probe_cancels.*failed[\s\S]*server/);
    expect(statuses(r.runDir)).toEqual({
      server: 'FAILED',
      bench: 'CANCELLED',
      independent: 'CANCELLED',
      never_runs: 'CANCELLED',
    });
    expect(readFileSync(join(r.runDir, 'sflow.log'), 'utf8')).toContain('failure probe terminated: server');
    expect(r.stdout + r.stderr).toContain(r.runDir);
    expect(taskLog(r.runDir, 'never_runs')).toBe('');
  });

  it('09 masked failures, fail_fast, retries with backoff, deprecated timeout', async () => {
    const r = await run(['09_script_failures_and_retries.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/timeout.*not enforced/i);
    const t = taskTable(r.runDir);
    expect(Object.values(t).every((x) => x.status === 'COMPLETED')).toBe(true);
    expect(taskLog(r.runDir, 'masked')).toContain('masked: still here');
    expect(t.strict.attempts).toBe(2);
    expect(taskLog(r.runDir, 'strict').match(/strict: passed/g)).toHaveLength(1);
    expect(t.flaky.attempts).toBe(3);
    expect(readFileSync(join(r.runDir, 'flaky_attempts'), 'utf8').trim()).toBe('3');
    const retries = readFileSync(join(r.runDir, 'sflow.log'), 'utf8')
      .split('\n')
      .filter((l) => /WARNING.*flaky.*retry/i.test(l));
    expect(retries).toHaveLength(2);
  });

  it('10 inline artifact, fs:// artifact, outputs.json', async () => {
    const r = await run(['10_outputs_and_artifacts.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(r.runDir, 'configs', 'run.json'), 'utf8')).toBe(
      '{"model": "tiny", "workflow": "outputs_and_artifacts"}',
    );
    expect(taskLog(r.runDir, 'bench')).toContain('scratch=/tmp');
    const o = readJson(join(r.runDir, 'bench', 'outputs.json'));
    expect(o.task).toBe('bench');
    expect(o.outputs).toEqual({ ttft: [41.5, 40.5], tps: 1234.5, batch: 16, model: 'tiny' });
    const bad = await run(['10_outputs_and_artifacts.yaml'], ['--artifact', 'SCRATCH=fs:///does/not/exist']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Artifact path validation failed');
    expect(bad.stderr).toContain('SCRATCH');
  });

  it('11 modular composition runs (case A and F)', async () => {
    const m = (f: string): string => join('11_modular', f);
    const a = await run([m('base.yaml'), m('server.yaml'), m('bench.yaml')], ['-M', 'agg_server']);
    expect(a.code, a.stderr).toBe(0);
    expect(taskLog(a.runDir, 'bench')).toContain('sent 5 requests to server says hi');
    const f = await run([m('base.yaml'), m('server_attached.yaml'), m('bench_plain.yaml')]);
    expect(f.code, f.stderr).toBe(0);
  });

  it('12 GPU slices and the task namespace', async () => {
    const r = await run(['12_gpu_slices_and_task_context.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(taskLog(r.runDir, 'router')).toBe(
      [
        'prefill0 gpus=[0, 1] node=localhost ip=127.0.0.1',
        'prefill1 gpus=[2, 3] via full name=[2, 3]',
        'decode gpus=[0, 1, 2, 3] node=localhost-1 backend=box',
        'self nodes=2 names=localhost,localhost-1',
        'env assigned=localhost,localhost-1 cvd=<unset>',
        '',
      ].join('\n'),
    );
    expect(taskLog(r.runDir, 'decode')).toContain('decode sees 0,1,2,3 on localhost-1 (1 node(s))');
  });
});
