/**
 * Where an `sflow batch` job's allocation comes from (cli/batch-allocation.ts): a flag wins over
 * the recipe's Slurm backend, the recipe over detection (asked only when needed, once per
 * command); nothing anywhere is a usage error; extra_args become one #SBATCH line per option; the
 * script names each value's source and runs the composed copy beside it when there is one.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  AllocationResolver,
  sbatchLines,
  type AllocationDetect,
  type RecipeBackend,
} from '../../../src/cli/batch-allocation.js';
import { batchScript, type BatchScriptInput } from '../../../src/cli/batch-script.js';
import { SflowError } from '../../../src/config/errors.js';

const backend = (config: Record<string, unknown>): RecipeBackend => ({
  name: 'gpu',
  config,
  at: (field, i) => `wf.yaml:${field.length}:${i ?? 0}`,
});

function detector(partition?: string, account?: string) {
  const asked: string[] = [];
  const d: AllocationDetect = {
    partition: () => (asked.push('partition'), Promise.resolve(partition)),
    account: () => (asked.push('account'), Promise.resolve(account)),
    source: (f) => (f === 'partition' ? 'sinfo' : 'sacctmgr'),
  };
  return { d, asked };
}

describe('batch allocation sources', () => {
  it('the recipe backend gives partition, account, time, job name and extra lines; nothing is detected', async () => {
    const { d, asked } = detector('detected', 'detected');
    const warned: string[] = [];
    const r = new AllocationResolver({ extra: [] }, d, (m) => warned.push(m));
    const a = await r.forJob(
      backend({
        partition: 'batch',
        account: 'proj',
        time: 30,
        job_name: 'wf',
        extra_args: ['--exclusive', '--gres', 'gpu:8', '--constraint=h100'],
      }),
    );
    expect(a.partition).toEqual({
      value: 'batch',
      from: "the recipe: backend 'gpu' partition (wf.yaml:9:0)",
    });
    expect(a.account.value).toBe('proj');
    expect(a.time).toEqual({ value: '30', from: "the recipe: backend 'gpu' time (wf.yaml:4:0)" });
    expect(a.jobName.value).toBe('wf');
    expect(a.extra.map((e) => [e.value, e.from])).toEqual([
      ['--exclusive', "the recipe: backend 'gpu' extra_args (wf.yaml:10:0)"],
      ['--gres gpu:8', "the recipe: backend 'gpu' extra_args (wf.yaml:10:1)"],
      ['--constraint=h100', "the recipe: backend 'gpu' extra_args (wf.yaml:10:3)"],
    ]);
    expect(asked).toEqual([]);
    expect(warned).toEqual([]);
  });

  it('flags win over the recipe; -e lines follow the recipe extra_args', async () => {
    const { d } = detector();
    const r = new AllocationResolver(
      { partition: 'p2', account: 'a2', time: '01:00:00', jobName: 'mine', extra: ['--qos=high'] },
      d,
      () => undefined,
    );
    const a = await r.forJob(
      backend({ partition: 'batch', account: 'proj', time: 30, job_name: 'wf', extra_args: ['--exclusive'] }),
    );
    expect([a.partition, a.account, a.time, a.jobName].map((v) => [v!.value, v!.from])).toEqual([
      ['p2', '-p/--partition'],
      ['a2', '-A/--account'],
      ['01:00:00', '--time'],
      ['mine', '-J/--job-name'],
    ]);
    expect(a.extra.map((e) => e.value)).toEqual(['--exclusive', '--qos=high']);
  });

  it('detection fills what neither gives, asked once per command and announced once', async () => {
    const { d, asked } = detector('debug', undefined);
    const warned: string[] = [];
    const r = new AllocationResolver({ extra: [] }, d, (m) => warned.push(m));
    const b = backend({ account: 'proj' });
    for (let i = 0; i < 3; i++)
      expect((await r.forJob(b)).partition).toEqual({ value: 'debug', from: 'sinfo' });
    expect(asked).toEqual(['partition']);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/using partition 'debug' \(auto-detected by sinfo/);
    // a bulk job's own name counts as given
    expect((await r.forJob(b, 'row_3')).jobName.value).toBe('row_3');
    expect((await r.forJob(b)).jobName).toEqual({ value: 'sflow', from: 'the default' });
  });

  it('no account anywhere: a usage error (exit 2) that names the three places', async () => {
    const { d } = detector('debug', undefined);
    const r = new AllocationResolver({ extra: [] }, d, () => undefined);
    const e = await r.forJob(backend({})).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SflowError);
    expect((e as SflowError).exitCode).toBe(2);
    expect((e as SflowError).message).toBe(
      "no account for the job: no -A/--account given, the recipe's slurm backend 'gpu' gives none, and sacctmgr found none",
    );
    expect((e as SflowError).hint).toBe("pass -A/--account, or set account: in the recipe's slurm backend");
  });

  it('a value with a line break is refused (it would start a command of its own)', async () => {
    const { d } = detector();
    const r = new AllocationResolver({ extra: [] }, d, () => undefined);
    const e = await r.forJob(backend({ partition: 'p\necho pwned', account: 'a' })).catch((x: unknown) => x);
    expect((e as SflowError).code).toBe('batch.multiline_value');
    expect((e as SflowError).exitCode).toBe(1); // the recipe's mistake
  });

  it('option values stay on their option line', () => {
    expect(sbatchLines(['--gres', 'gpu:8', '-N', '2', '--x=1', 'y', 'z']).map((l) => l.line)).toEqual([
      '--gres gpu:8',
      '-N 2',
      '--x=1',
      'y',
      'z',
    ]);
  });
});

describe('the script', () => {
  const input: BatchScriptInput = {
    sflow: ['/n/node', '/s/bin/sflow.js'],
    version: '0.1.0',
    files: ['/w/a.yaml', '/w/b.yaml'],
    composed: '/w/jobs/job.yaml',
    output: '/w/o/%j.out',
    error: '/w/o/%j.err',
    alloc: {
      jobName: { value: 'sflow', from: 'the default' },
      partition: { value: 'batch', from: "the recipe: backend 'gpu' partition (/w/b.yaml:5:16)" },
      account: { value: 'proj', from: '-A/--account' },
      time: { value: '30', from: "the recipe: backend 'gpu' time (/w/b.yaml:6:11)" },
      extra: [{ value: '--exclusive', from: "the recipe: backend 'gpu' extra_args (/w/b.yaml:8:9)" }],
    },
    nodes: 2,
    nodesFrom: "the recipe: backend 'gpu' nodes (/w/b.yaml:7:12)",
    workspaceDir: '/w',
    outputDir: '/w/out',
    sets: ['SECRET_TOKEN=abc'],
    artifacts: ['M=fs:///m'],
    missable: ['bench'],
  };

  it('says where each #SBATCH setting came from, then the settings, before any command', () => {
    const s = batchScript(input);
    expect(spawnSync('bash', ['-n'], { input: s }).status).toBe(0);
    const lines = s.split('\n');
    const firstCommand = lines.findIndex((l) => l.trim() && !l.startsWith('#'));
    const sbatch = lines.filter((l) => l.startsWith('#SBATCH'));
    expect(sbatch).toEqual([
      '#SBATCH --job-name=sflow',
      '#SBATCH --output=/w/o/%j.out',
      '#SBATCH --error=/w/o/%j.err',
      '#SBATCH --mem=0',
      '#SBATCH --partition=batch',
      '#SBATCH --account=proj',
      '#SBATCH --nodes=2',
      '#SBATCH --time=30',
      '#SBATCH --exclusive',
    ]);
    expect(lines.indexOf(sbatch.at(-1)!)).toBeLessThan(firstCommand);
    expect(s).toContain("#   --partition=batch  ← the recipe: backend 'gpu' partition (/w/b.yaml:5:16)");
    expect(s).toContain('#   --account=proj     ← -A/--account');
    expect(s).toContain("#   --nodes=2          ← the recipe: backend 'gpu' nodes (/w/b.yaml:7:12)");
    expect(s).toContain("#   --exclusive        ← the recipe: backend 'gpu' extra_args (/w/b.yaml:8:9)");
  });

  it('runs the composed copy (the overrides are in it: none on its command line) and keeps it with the run', () => {
    const s = batchScript(input);
    expect(s).toContain('RUN_ARGS=(--file /w/jobs/job.yaml --workspace-dir /w --output-dir /w/out)');
    expect(s).not.toContain('SECRET_TOKEN');
    expect(s).toContain('  cp -f /w/jobs/job.yaml "$run_dir/" 2>/dev/null');
    expect(s).not.toContain('cp -f /w/a.yaml');
    // printed rather than written (no composed copy): the source files with their overrides
    const { composed: _c, ...printed } = input;
    expect(batchScript(printed)).toContain(
      'RUN_ARGS=(--file /w/a.yaml --file /w/b.yaml --set SECRET_TOKEN=abc --artifact M=fs:///m --missable-tasks bench',
    );
  });
});
