/**
 * `sflow sample`: the catalogue, copying, and every shipped sample dry-runs; the local ones run
 * to success (real processes, a real HTTP server on a free port).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, sflow } from '../helpers/cli.js';
import { onlyRunDir, readJson, taskLog, taskTable } from '../helpers/run-dir.js';

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

const single = readdirSync(join(SAMPLES, 'self_contained'), { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const MODULAR = join(SAMPLES, 'modular', 'llm_disagg');
const BACKENDS = readdirSync(join(MODULAR, 'backends')).sort();

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

describe('sflow sample', () => {
  it('ships the samples the catalogue promises, each with a one-line description', () => {
    const r = sflow(['sample', '--list']);
    expect(r.code, r.stderr).toBe(0);
    for (const name of [
      'self_contained/local/hello_world',
      'self_contained/local/dag',
      'self_contained/local/variables_sweep',
      'self_contained/local/result_parsing',
      'self_contained/local/service_benchmark',
      'self_contained/local/monitor',
      'self_contained/slurm/hello_world',
      'self_contained/slurm/gpu_indices',
      'self_contained/slurm/monitor',
      'self_contained/docker/hello_world',
      'self_contained/docker/multi_node',
      'self_contained/kubernetes/hello_world',
      'modular/llm_disagg',
    ]) {
      const line = r.stdout.split('\n').find((l) => l.trim().startsWith(name + ' '));
      expect(line, name).toBeDefined();
      expect(line!.trim().slice(name.length).trim().length, `${name} description`).toBeGreaterThan(20);
    }
    expect(r.stdout).toMatch(/^Slurm:$/m);
    expect(sflow(['sample']).stdout).toBe(r.stdout);
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

  it('copies a modular sample folder whole', () => {
    const cwd = scratch();
    const r = sflow(['sample', 'modular/llm_disagg'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    for (const f of ['README.md', 'benchmark.yaml', 'workloads/vllm_disagg.yaml', 'backends/slurm.yaml'])
      expect(existsSync(join(cwd, 'llm_disagg', f)), f).toBe(true);
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

describe('every shipped sample passes --dry-run', () => {
  it.each(single)('self_contained/%s', (f) => {
    const cwd = scratch();
    const r = sflow(['run', '-f', join(SAMPLES, 'self_contained', f), '--dry-run'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Configuration is valid');
    expect(readdirSync(cwd)).toEqual([]);
  });

  it.each(BACKENDS)('modular/llm_disagg with backends/%s', (b) => {
    const files = [
      `backends/${b}`,
      'workloads/dynamo_infra.yaml',
      'workloads/vllm_disagg.yaml',
      'benchmark.yaml',
    ];
    const r = sflow(['run', ...files.flatMap((f) => ['-f', f]), '--dry-run'], { cwd: MODULAR });
    expect(r.code, r.stderr).toBe(0);
    for (const t of ['etcd', 'nats', 'frontend', 'prefill_worker', 'decode_worker', 'benchmark'])
      expect(r.stdout).toContain(`] ${t}\n`);
    expect(r.stdout).toMatch(
      /benchmark[\s\S]*depends_on: .*prefill_worker.*decode_worker|decode_worker.*prefill_worker/,
    );
    if (b !== 'kubernetes.yaml') {
      // pinned, disjoint GPUs for prefill and decode on the same node
      expect(r.stdout).toMatch(/GPU 0: prefill_worker/);
      expect(r.stdout).toMatch(/GPU 2: decode_worker/);
    }
  });

  it('the Slurm GPU sample plans all three GPU modes', () => {
    const r = sflow(['run', '-f', join(SAMPLES, 'self_contained/slurm/gpu_indices.yaml'), '--dry-run']);
    expect(r.stdout).toMatch(/\] by_count\n[\s\S]*?CUDA_VISIBLE_DEVICES: 0,1,2,3/);
    expect(r.stdout).toMatch(/\] pinned\n[\s\S]*?CUDA_VISIBLE_DEVICES: 6,4/);
    expect(r.stdout).toMatch(
      /\] fanned_out\n[\s\S]*?nodes: cluster-node0,cluster-node1[\s\S]*?CUDA_VISIBLE_DEVICES: 1,0/,
    );
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

  it('monitor', () => {
    const { statuses } = run('monitor', ['-s', 'WORK_SECONDS=1']);
    expect(statuses).toEqual({ busy: 'COMPLETED', after: 'COMPLETED' });
  });
});
