/**
 * The README is true: every `npx sflow` command it shows names files that exist and runs (the
 * dry-runs exit 0), the backend/workload/benchmark split it describes ships as example files that
 * dry-run on every backend, and every file `--help` points to exists. In-process through the
 * CLI's entry; the README's first dry-run also runs the built CLI as the end-to-end check.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, sflow } from '../helpers/cli.js';
import { sflowInProcess as cli } from '../helpers/cli-inprocess.js';

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const out = mkdtempSync(join(tmpdir(), 'sflow-readme-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** `npx sflow …` commands of the README's bash blocks (continuation lines joined). */
function readmeCommands(): string[][] {
  const blocks = [...readme.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1].replace(/\\\n\s*/g, ''));
  return blocks
    .flatMap((b) => b.split('\n'))
    .map((l) => l.replace(/#.*$/, '').trim())
    .flatMap((l) => l.split('&&').map((c) => c.trim()))
    .filter((c) => c.startsWith('npx sflow '))
    .map((c) => c.slice('npx sflow '.length).split(/\s+/));
}

const filesOf = (args: string[]) => args.flatMap((a, i) => (args[i - 1] === '-f' ? [a] : []));

describe('README commands', () => {
  const commands = readmeCommands();

  it('shows the quick start run and both dry-runs', () => {
    expect(commands.map((c) => c.join(' '))).toEqual(
      expect.arrayContaining([
        'run -f examples/hello.yaml',
        'run -f examples/hello.yaml --dry-run',
        'run -f examples/backends/slurm.yaml -f examples/workloads/vllm.yaml -f examples/benchmark.yaml --dry-run -s SERVER_GPUS=4',
      ]),
    );
  });

  it('names only files that exist', () => {
    const missing = commands.flatMap(filesOf).filter((f) => !existsSync(join(REPO, f)));
    expect(missing).toEqual([]);
  });

  it.each(commands.filter((c) => c[0] === 'run' && c.includes('--dry-run')).map((c) => [c.join(' '), c]))(
    'npx sflow %s exits 0',
    async (_line, args) => {
      const r = await cli([...args, '--output-dir', out], { cwd: REPO });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('✓ Configuration is valid');
    },
  );

  it('end to end: the built CLI dry-runs the composed example', () => {
    const r = sflow([
      'run',
      '-f',
      'examples/backends/slurm.yaml',
      '-f',
      'examples/workloads/vllm.yaml',
      '-f',
      'examples/benchmark.yaml',
      '--dry-run',
      '-s',
      'SERVER_GPUS=4',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Dry-run complete: vllm_benchmark');
  });
});

describe('the backend / workload / benchmark split', () => {
  const backends = readdirSync(join(REPO, 'examples', 'backends')).filter((f) => f.endsWith('.yaml'));

  it('ships a fragment per backend type', () => {
    expect(backends.sort()).toEqual(['docker.yaml', 'kubernetes.yaml', 'local.yaml', 'slurm.yaml']);
  });

  it.each(backends)('%s + workloads/vllm.yaml + benchmark.yaml plans the server on 4 GPUs', async (b) => {
    const args = ['run', '-f', `examples/backends/${b}`, '-f', 'examples/workloads/vllm.yaml'];
    const r = await cli([...args, '-f', 'examples/benchmark.yaml', '--dry-run', '-s', 'SERVER_GPUS=4'], {
      cwd: REPO,
    });
    expect(r.code, r.stderr).toBe(0);
    const server = r.stdout.slice(r.stdout.indexOf('] server\n'));
    expect(server).toMatch(/resources: gpus \{"count":4\}/);
    // Kubernetes requests GPUs as pod resources: the device plugin picks the cards, no indices are planned
    if (b !== 'kubernetes.yaml') expect(server).toContain('CUDA_VISIBLE_DEVICES: 0,1,2,3');
    expect(r.stdout).toMatch(/\] benchmark\n\s+backend: cluster .*\n\s+depends_on: \['server'\]/);
    // a backend this version cannot run yet is said to be refused by a real run; local, slurm and kubernetes run
    if (b === 'local.yaml' || b === 'slurm.yaml' || b === 'kubernetes.yaml')
      expect(r.stdout).not.toContain('a real run refuses this');
    else expect(r.stdout).toMatch(/backend 'cluster' \(\w+\): .* — a real run refuses this/);
  });
});

describe('--help', () => {
  it('points only to files that exist', async () => {
    for (const cmd of [[], ['run'], ['compose'], ['visualize'], ['schema']]) {
      const r = await cli([...cmd, '--help']);
      const refs = [...r.stdout.matchAll(/\b([\w-]+(?:\/[\w-]+)*\.md)\b/g)].map((m) => m[1]);
      expect(refs.length, cmd.join(' ')).toBeGreaterThan(0);
      for (const f of refs) expect(existsSync(join(REPO, f)), `${cmd.join(' ')} --help: ${f}`).toBe(true);
    }
  });
});
