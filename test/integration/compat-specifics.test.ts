/**
 * The case-specific facts ../shared/compat/README.md lists for the original tool's recipes (read
 * in place, never copied): planned operator types and the benchmark's dependencies in the
 * backend-agnostic compositions, workflow names, report folders, storage targets, Docker
 * multi-node placement and the GPU placement map that gpu_indices.yaml states in its header.
 * The dry-runs go through the real CLI program in-process (`sflow run … --dry-run`), from the
 * compat folder as the README asks.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { describeWithShared, sharedPath } from '../helpers/shared.js';

const COMPAT = sharedPath('compat');
/**
 * made when a test of this file runs (beforeAll), never at import: without ../shared every test
 * here is skipped, and then no afterAll runs to remove it
 */
let OUT = '';

interface Case {
  id: string;
  args: string[];
}

const CASES: Case[] = (existsSync(COMPAT) ? readFileSync(join(COMPAT, 'cases.txt'), 'utf8') : '')
  .split('\n')
  .filter((l) => l.trim() && !l.startsWith('#'))
  .map((l) => {
    const [id, , args] = l.split('|').map((x) => x.trim());
    return { id, args: args.split(/\s+/) };
  });

const byId = (id: string): Case => {
  const c = CASES.find((x) => x.id === id);
  if (!c) throw new Error(`no case ${id} in cases.txt`);
  return c;
};

/** `sflow run <args> --dry-run --skip-artifact-check` in-process: exit code and output. */
async function dryRun(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  process.exitCode = undefined;
  try {
    await buildProgram().parseAsync([
      'node',
      'sflow',
      'run',
      ...args,
      '--dry-run',
      '--skip-artifact-check',
      '--output-dir',
      OUT,
    ]);
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { code, stdout, stderr };
}

async function plan(args: string[]): Promise<string> {
  const r = await dryRun(args);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain('Configuration is valid');
  return r.stdout;
}

/** The task blocks of the "Task plan:" section, by task name. */
function taskBlocks(text: string): Map<string, string> {
  const section = text.slice(text.indexOf('\nTask plan:\n'));
  const blocks = new Map<string, string>();
  for (const m of section.matchAll(/^ {2}\[\d+\] (\S+)\n([\s\S]*?)(?=^ {2}\[\d+\] |^\S|^$)/gm))
    blocks.set(m[1], m[2]);
  return blocks;
}

const operatorType = (block: string | undefined) => /operator: \S+ \((\w+)\)/.exec(block ?? '')?.[1];
const dependsOn = (block: string | undefined) => {
  const m = /depends_on: \[(.*)\]/.exec(block ?? '');
  return m ? [...m[1].matchAll(/'([^']+)'/g)].map((x) => x[1]) : [];
};

let cwd = '';
beforeAll(() => {
  OUT = mkdtempSync(join(tmpdir(), 'sflow-compat-facts-'));
  cwd = process.cwd();
  if (existsSync(COMPAT)) process.chdir(COMPAT);
});
afterAll(() => {
  process.chdir(cwd);
  try {
    // a dry-run creates nothing
    expect(readdirSync(OUT)).toEqual([]);
  } finally {
    rmSync(OUT, { recursive: true, force: true });
  }
});

describeWithShared('compat', 'backend-agnostic compositions BA1–BA20', () => {
  /** operator type of the serving task(s), from the README's table */
  // prettier-ignore
  const SERVED: Record<string, string> = {
    BA1: 'k8s', BA2: 'k8s_mpi', BA3: 'k8s', BA4: 'srun', BA5: 'k8s', BA6: 'srun', BA7: 'k8s', BA8: 'k8s_mpi',
    BA9: 'srun', BA10: 'k8s', BA11: 'srun', BA12: 'k8s', BA13: 'srun', BA14: 'docker_run', BA15: 'docker_run',
    BA16: 'docker_run', BA17: 'k8s', BA18: 'srun', BA19: 'k8s', BA20: 'k8s',
  };

  it.each(Object.keys(SERVED))('%s', async (id) => {
    const text = await plan(byId(id).args);
    expect(text).toContain('Dry-run complete: modular_inference');
    const blocks = taskBlocks(text);
    const disagg = Number(id.slice(2)) >= 17;
    const servers = disagg ? ['prefill_server', 'decode_server'] : ['server'];
    expect([...blocks.keys()]).toEqual(expect.arrayContaining([...servers, 'benchmark']));
    // the benchmark waits for the server(s): their required_by: [benchmark] folded in
    expect(dependsOn(blocks.get('benchmark')).sort()).toEqual([...servers].sort());
    for (const s of servers) expect(operatorType(blocks.get(s)), s).toBe(SERVED[id]);
    // every task names its operator and type; with k8s_mpi only the server is MPI, the rest plain k8s
    for (const [name, block] of blocks) {
      const expected = SERVED[id] === 'k8s_mpi' && !servers.includes(name) ? 'k8s' : SERVED[id];
      expect(operatorType(block), `${id} ${name}`).toBe(expected);
    }
  });
});

describeWithShared('compat', 'single-file recipes', () => {
  it('docker hello_world plans docker_run', async () => {
    const text = await plan(byId('hello_world').args.map((a) => a.replace('/local/', '/docker/')));
    expect(text).toContain('Dry-run complete: docker_hello_world');
    expect([...taskBlocks(text).values()].map(operatorType)).toEqual(['docker_run']);
  });

  it.each([
    ['kubernetes_hello_world', 'kubernetes_hello_world', ['k8s']],
    ['multinode', 'k8s_multinode', ['k8s']],
    ['mpi_smoke', 'k8s_mpi_smoke', ['k8s_mpi']],
    ['dgx_trtllm_serve', 'dgx_trtllm_serve', ['k8s_mpi', 'k8s']],
    ['gb_trtllm_serve', 'gb_trtllm_serve', ['k8s_mpi', 'k8s']],
  ])('kubernetes %s plans %s with %j', async (id, workflow, types) => {
    const text = await plan(byId(id).args);
    expect(text).toContain(`Dry-run complete: ${workflow}`);
    expect([...new Set([...taskBlocks(text).values()].map(operatorType))]).toEqual(types);
  });

  it('gb_trtllm_serve joins compute domain channel "auto"', async () => {
    const text = await plan(byId('gb_trtllm_serve').args);
    expect(text).toMatch(/compute_domain=\{"channel":"auto"\}/);
  });

  it('monitor.yaml lists the window report folders', async () => {
    const text = await plan(byId('monitor').args);
    expect(text).toContain(
      "[windowed] windowed/work/  (log-marker window of work: start='MEASURE_START' (first), end='MEASURE_END' (last); csv, svg)",
    );
    expect(text).toContain('[lifecycle] lifecycle/warmup/  (task lifecycle window; csv, svg)');
  });

  it('storage_upload shows the storage target and the planned uploads', async () => {
    const text = await plan(byId('storage_upload').args);
    expect(text).toMatch(/^ {2}results_bucket: s3 .*\(not contacted in dry-run\)$/m);
    expect(text).toMatch(/upload: .*results\.csv → results_bucket:/);
  });

  it('storage_upload_all shows the planned workflow upload', async () => {
    const text = await plan(byId('storage_upload_all').args);
    expect(text).toContain('archive/${{ workflow.run_id }}.zip');
  });

  it('docker multi_node: nodes dgx-a and dgx-b, one GPU each, device 0', async () => {
    const text = await plan(byId('multi_node').args);
    const blocks = [...taskBlocks(text).values()];
    expect(blocks).toHaveLength(1);
    const [block] = blocks;
    expect(block).toMatch(/nodes: dgx-a,dgx-b\n/);
    expect(block).toContain('CUDA_VISIBLE_DEVICES: 0\n');
    // a container per host, reached over ssh, with the planned device quoted for docker (node dgx-b's: golden)
    expect(block).toMatch(/command: docker -H ssh:\/\/dgx-a run .*--gpus '?"device=0"'? /);
  });

  it('gpu_indices.yaml: the placement map its header comment states', async () => {
    const file = 'examples/self_contained/slurm/gpu_indices.yaml';
    const header = readFileSync(join(COMPAT, file), 'utf8');
    // "#   node0  GPU 0,1 -> pin_low          GPU 2,3 -> backfill_high"
    const expected: Record<string, string> = {};
    for (const line of header.split('\n')) {
      const node = /^#\s+node(\d+)\s+(GPU .*)$/.exec(line);
      if (!node) continue;
      for (const m of node[2].matchAll(/GPU ([\d,]+) -> (\w+)/g))
        for (const g of m[1].split(',')) expected[`node${node[1]} GPU ${g}`] = m[2];
    }
    expect(Object.keys(expected)).toHaveLength(12);
    const text = await plan(['-f', file]);
    const actual: Record<string, string> = {};
    let node = '';
    for (const line of text.slice(text.indexOf('Allocation map'), text.indexOf('\nDAG:')).split('\n')) {
      const n = /node \S+-(node\d+)$/.exec(line);
      if (n) node = n[1];
      const g = /GPU (\d+): (\S+)$/.exec(line);
      if (g && g[2] !== '.') actual[`${node} GPU ${g[1]}`] = g[2];
    }
    expect(actual).toEqual(expected);
  });
});
