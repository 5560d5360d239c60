/**
 * `sflow sample`: the catalogue (every sample the original's docs name, grouped by platform and
 * family), copying (same-named samples side by side, never over each other), and the local
 * samples running to success (real processes, a real HTTP server on a free port; the modular
 * serving recipe on this machine with the stand-ins first on PATH). Every sample's dry-run is in
 * samples-dryrun.test.ts; the storage samples run in samples-storage.test.ts.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, sflow } from '../helpers/cli.js';
import { onlyRunDir, readJson, taskLog, taskTable } from '../helpers/run-dir.js';
import { describeWithShared, sharedPath } from '../helpers/shared.js';
import {
  QUICK_BENCH,
  modularFiles,
  modularPortNames,
  portArgs,
  resultValues,
  standinEnv,
  standinsMissing,
  required,
  modularServers,
  notReadyBefore,
  processesOf,
  standinStateDirs,
  newStandinState,
} from '../helpers/standins.js';

const SAMPLES = join(REPO, 'assets', 'samples');
const dirs: string[] = [];
function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), 'sflow-sample-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** every sample the original tool's docs and release notes name (../shared/seeds) */
const SEED_SAMPLES = [
  'self_contained/local/hello_world',
  'self_contained/local/dag',
  'self_contained/local/result_parsing',
  'self_contained/local/monitor',
  'self_contained/local/storage_upload',
  'self_contained/local/storage_upload_all',
  'self_contained/slurm/gpu_indices',
  'self_contained/slurm/gpu_placement_matrix',
  'self_contained/slurm/monitor_mixed',
  'self_contained/slurm/dynamo_trtllm_disagg',
  'self_contained/docker/multi_node',
  'self_contained/docker/gpu_monitor',
  'self_contained/docker/dynamo_vllm_agg',
  'self_contained/docker/dynamo_vllm_disagg',
  'self_contained/kubernetes/hello_world',
  'self_contained/kubernetes/dynamo_trtllm_disagg',
  'modular/backend_agnostic',
];

describe('sflow sample', () => {
  it('lists every sample the original names, each with a description, grouped by platform and family', () => {
    const r = sflow(['sample', '--list']);
    expect(r.code, r.stderr).toBe(0);
    for (const name of [
      ...SEED_SAMPLES,
      'self_contained/local/service_benchmark',
      'self_contained/slurm/monitor',
    ]) {
      const line = r.stdout.split('\n').find((l) => l.trim().startsWith(name + ' '));
      expect(line, name).toBeDefined();
      expect(line!.trim().slice(name.length).trim().length, `${name} description`).toBeGreaterThan(20);
    }
    // platform headings, then family headings within each
    expect(r.stdout).toMatch(
      /^Slurm:\n {2}basics:\n {4}self_contained\/slurm\/hello_world .*\n {2}GPU placement and monitoring:\n(?: {4}.*\n)+ {2}LLM serving \(vLLM, SGLang, TensorRT-LLM, Dynamo\):\n {4}self_contained\/slurm\/dynamo_trtllm_disagg /m,
    );
    expect(r.stdout).toMatch(/^ {2}uploads to storage:\n {4}self_contained\/local\/storage_upload /m);
    expect(sflow(['sample']).stdout).toBe(r.stdout);
  });

  describeWithShared('seeds', 'the samples the seeds name', () => {
    it('are exactly the ones checked above (grep of ../shared/seeds)', () => {
      const seeds = readdirSync(sharedPath('seeds'))
        .map((f) => readFileSync(sharedPath('seeds', f), 'utf8'))
        .join('\n');
      const named = new Set(
        [...seeds.matchAll(/\b((?:self_contained\/[a-z]+|modular)\/[a-z_]+)/g)].map((m) => m[1]),
      );
      expect([...named].filter((n) => !SEED_SAMPLES.includes(n))).toEqual([]);
    });
  });

  it('no two samples share a first line (it tells which sample a copied file is)', () => {
    const heads = readdirSync(join(SAMPLES, 'self_contained'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => readFileSync(join(SAMPLES, 'self_contained', f), 'utf8').split('\n')[0]);
    expect(heads.every((h) => h.startsWith('# '))).toBe(true);
    expect(new Set(heads).size).toBe(heads.length);
  });

  it('copies a sample as ./<basename>.yaml, refuses to overwrite, accepts -o DIR and --force', () => {
    const cwd = scratch();
    const a = sflow(['sample', 'self_contained/local/dag'], { cwd });
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toContain('Wrote ./dag.yaml');
    expect(readFileSync(join(cwd, 'dag.yaml'), 'utf8')).toBe(
      readFileSync(join(SAMPLES, 'self_contained/local/dag.yaml'), 'utf8'),
    );
    const again = sflow(['sample', 'local/dag'], { cwd });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists');
    writeFileSync(join(cwd, 'dag.yaml'), 'changed');
    expect(sflow(['sample', 'dag', '--force'], { cwd }).code).toBe(0);
    expect(readFileSync(join(cwd, 'dag.yaml'), 'utf8')).toContain('workflow:');
    const o = sflow(['sample', 'kubernetes/hello_world', '-o', 'recipes'], { cwd });
    expect(o.code, o.stderr).toBe(0);
    expect(existsSync(join(cwd, 'recipes', 'hello_world.yaml'))).toBe(true);
  });

  it('same-named samples of different platforms land side by side, never over each other', () => {
    const cwd = scratch();
    const text = (f: string) => readFileSync(join(cwd, f), 'utf8');
    const original = (n: string) => readFileSync(join(SAMPLES, 'self_contained', `${n}.yaml`), 'utf8');
    expect(sflow(['sample', 'slurm/dynamo_trtllm_disagg'], { cwd }).stdout).toContain(
      'Wrote ./dynamo_trtllm_disagg.yaml',
    );
    const k = sflow(['sample', 'kubernetes/dynamo_trtllm_disagg'], { cwd });
    expect(k.code, k.stderr).toBe(0);
    expect(k.stdout).toContain(
      'Wrote ./kubernetes_dynamo_trtllm_disagg.yaml (dynamo_trtllm_disagg.yaml there is self_contained/slurm/dynamo_trtllm_disagg)',
    );
    expect(text('dynamo_trtllm_disagg.yaml')).toBe(original('slurm/dynamo_trtllm_disagg'));
    expect(text('kubernetes_dynamo_trtllm_disagg.yaml')).toBe(original('kubernetes/dynamo_trtllm_disagg'));
    // the same sample again, or the second one again: refused, nothing rewritten
    expect(sflow(['sample', 'slurm/dynamo_trtllm_disagg'], { cwd }).stderr).toContain(
      './dynamo_trtllm_disagg.yaml already exists',
    );
    expect(sflow(['sample', 'kubernetes/dynamo_trtllm_disagg'], { cwd }).stderr).toContain(
      './kubernetes_dynamo_trtllm_disagg.yaml already exists',
    );
    // --force replaces only the file of that sample, even after the user edited its body
    writeFileSync(
      join(cwd, 'dynamo_trtllm_disagg.yaml'),
      original('slurm/dynamo_trtllm_disagg') + '# my notes\n',
    );
    expect(sflow(['sample', 'kubernetes/dynamo_trtllm_disagg', '--force'], { cwd }).code).toBe(0);
    expect(text('dynamo_trtllm_disagg.yaml')).toContain('# my notes');
    // a file of the user's own under the name is theirs: refused without --force
    writeFileSync(join(cwd, 'hello_world.yaml'), '# my own recipe\n');
    expect(sflow(['sample', 'docker/hello_world'], { cwd }).stderr).toContain(
      './hello_world.yaml already exists',
    );
  });

  it('copies a modular sample folder whole', () => {
    const cwd = scratch();
    const r = sflow(['sample', 'modular/backend_agnostic'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    for (const f of [
      'README.md',
      'benchmark.yaml',
      'workloads/dynamo_common.yaml',
      'backends/slurm_mpi.yaml',
      'backends/k8s_mpi.yaml',
    ])
      expect(existsSync(join(cwd, 'backend_agnostic', f)), f).toBe(true);
  });

  it('an unknown or ambiguous name exits 1 and lists what exists', () => {
    const u = sflow(['sample', 'no_such_sample']);
    expect(u.code).toBe(1);
    expect(u.stderr).toContain("unknown sample 'no_such_sample'");
    expect(u.stderr).toContain('self_contained/local/dag');
    const amb = sflow(['sample', 'hello_world']);
    expect(amb.code).toBe(1);
    expect(amb.stderr).toContain('matches several samples');
    expect(amb.stderr).toContain('self_contained/slurm/hello_world');
  });
});

describe.sequential('the local samples run to success', () => {
  function run(sample: string, extra: string[] = []) {
    const cwd = scratch();
    const r = sflow(['run', '-f', join(SAMPLES, 'self_contained/local', `${sample}.yaml`), ...extra], {
      cwd,
      timeoutMs: 90_000,
    });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const runDir = onlyRunDir(join(cwd, 'sflow_output'));
    return {
      runDir,
      statuses: Object.fromEntries(Object.entries(taskTable(runDir)).map(([k, v]) => [k, v.status])),
    };
  }

  it('hello_world', () => {
    const { runDir } = run('hello_world', ['-s', 'WHO=tests']);
    expect(taskLog(runDir, 'hello')).toContain('Hello, tests!');
  });

  it('dag: five tasks, fan-out and fan-in', () => {
    const { runDir, statuses } = run('dag', ['-s', 'STEP_SECONDS=0']);
    expect(Object.keys(statuses).sort()).toEqual(['count', 'fetch', 'report', 'tokenize', 'train']);
    expect(Object.values(statuses).every((s) => s === 'COMPLETED')).toBe(true);
    expect(taskLog(runDir, 'report')).toContain('model over 8 words');
  });

  it('variables_sweep: one task per domain pair', () => {
    const { runDir, statuses } = run('variables_sweep');
    expect(Object.keys(statuses).filter((t) => t.startsWith('train_'))).toHaveLength(4);
    expect(taskLog(runDir, 'summarize')).toContain('16 0.01');
  });

  it('result_parsing: log regexes and a JSON file', () => {
    const { runDir } = run('result_parsing');
    const bench = readJson(join(runDir, 'bench', 'result.json'));
    expect(bench.ok).toBe(true);
    expect(bench.values).toMatchObject({
      throughput: 123.5,
      requests: 5,
      status: 'PASS',
      mean_latency_ms: 19,
    });
    expect(readJson(join(runDir, 'summary', 'result.json')).values).toMatchObject({ accuracy: 0.91 });
  });

  it('service_benchmark: readiness-gated client, server torn down, throughput parsed', async () => {
    const { runDir, statuses } = run('service_benchmark', ['-s', `PORT=${await freePort()}`]);
    expect(statuses).toEqual({ server: 'READY', benchmark: 'COMPLETED' });
    expect(readJson(join(runDir, 'benchmark', 'result.json')).values.completed).toBe(20);
  });

  it('monitor: the reports it enables are written', () => {
    const { runDir, statuses } = run('monitor', ['-s', 'WORK_SECONDS=1']);
    expect(statuses).toEqual({ busy: 'COMPLETED', after: 'COMPLETED' });
    expect(readdirSync(join(runDir, 'sflow_monitor', 'lifecycle'))).toContain('workflow');
  });
});

const noStandins = standinsMissing();
if (noStandins && required) throw new Error(`SFLOW_REQUIRE_ENGINES=1 but ${noStandins}`);

describe.skipIf(noStandins !== undefined)(
  `modular/backend_agnostic on this machine with the stand-ins${noStandins ? ` (skipped: ${noStandins})` : ''}`,
  () => {
    async function serve(workload: string, extra: string[]) {
      const cwd = scratch();
      const state = standinStateDirs();
      const r = sflow(
        ['run', ...modularFiles('local', workload).flatMap((f) => ['-f', f]), ...QUICK_BENCH, ...extra,
          ...(await portArgs(...modularPortNames(workload)))],
        { cwd, timeoutMs: 100_000, env: standinEnv() },
      ); // prettier-ignore
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const runDir = onlyRunDir(join(cwd, 'sflow_output'));
      // every request answered, none failed: parsed from AIPerf's export, checked by the sample too
      expect(resultValues(runDir, 'benchmark')).toMatchObject({ request_count: 4, errors: 0 });
      expect(resultValues(runDir, 'benchmark').output_token_throughput).toBeGreaterThan(0);
      expect(notReadyBefore(runDir, 'benchmark', modularServers(workload))).toEqual([]);
      expect(await processesOf(runDir)).toEqual([]);
      expect(await newStandinState(state)).toEqual([]);
      return {
        runDir,
        statuses: Object.fromEntries(Object.entries(taskTable(runDir)).map(([k, v]) => [k, v.status])),
      };
    }

    it(
      'Dynamo + vLLM disaggregated: prefill and decode register, the benchmark waits for both',
      { timeout: 120_000 },
      async () => {
        const { runDir, statuses } = await serve('dynamo_vllm_disagg', [
          '-s',
          'GPUS_PER_NODE=2',
          '-s',
          'SERVER_GPUS=1',
        ]);
        expect(statuses).toEqual({
        nats_server: 'READY', etcd_server: 'READY', frontend_server: 'READY',
        prefill_server: 'READY', decode_server: 'READY', benchmark: 'COMPLETED',
      }); // prettier-ignore
        expect(taskLog(runDir, 'prefill_server')).toContain(
          'Model registration succeeded: Qwen3-0.6B (prefill)',
        );
        expect(taskLog(runDir, 'nats_server')).toMatch(/message on 'dynamo\.register\.vllm\.decode'/);
      },
    );

    it('trtllm-serve: two ranks from mpirun, rank 0 serves', { timeout: 120_000 }, async () => {
      const { runDir } = await serve('trtllm_serve', ['-s', 'GPUS_PER_NODE=2', '-s', 'SERVER_GPUS=2']);
      const log = taskLog(runDir, 'server');
      expect(log).toContain('rank 0 of 2 runs: trtllm-serve /models/Qwen3-0.6B');
      expect(log).toContain('rank 1 of 2: MPI worker of rank 0');
    });
  },
);
