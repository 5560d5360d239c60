/**
 * `sflow batch` pieces without a cluster: the default partition from `sinfo` output (C3, C10.10),
 * shell quoting in the generated script (run by bash: checked with `bash -n` and by running the
 * quoted words through bash), and the job-log copy with `%j` expanded inside the job.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  detectAccount,
  detectPartition,
  pickPartition,
  submitBatch,
} from '../../../src/backends/slurm/batch-env.js';
import type { SlurmExec } from '../../../src/backends/slurm/slurm-exec.js';
import type { ExecOutcome } from '../../../src/util/bounded-exec.js';
import { batchScript, composedPathFor, sq, type BatchScriptInput } from '../../../src/cli/batch-script.js';

const base: BatchScriptInput = {
  sflow: ['/opt/node/bin/node', '/opt/sflow/bin/sflow.js'],
  version: '0.1.0',
  files: ["/w/it's here.yaml"],
  output: '/w/logs dir/%j-%x.out',
  error: '/w/logs/%j.err',
  alloc: {
    jobName: { value: 'j', from: '-J/--job-name' },
    partition: { value: 'p', from: '-p/--partition' },
    account: { value: 'a', from: '-A/--account' },
    extra: [],
  },
  nodes: 2,
  workspaceDir: '/w',
  outputDir: '/w/out',
  sets: ['MSG=a b $HOME'],
  artifacts: [],
  missable: [],
};

describe('sflow batch script', () => {
  it('the default partition is the one sinfo marks with *, else the first', () => {
    expect(pickPartition('a\nb*\n')).toBe('b');
    expect(pickPartition('a\nb\n')).toBe('a');
    expect(pickPartition('\n')).toBeUndefined();
  });

  it('asks Slurm through the given caller: sinfo, sacctmgr for $USER, sbatch (job id parsed)', async () => {
    const calls: string[] = [];
    const answer = (stdout: string, ok = true) =>
      ({ ok, stdout, stderr: ok ? '' : 'boom', exitCode: ok ? 0 : 1 }) as ExecOutcome;
    const exec: SlurmExec = (tool, args) => {
      calls.push(`${tool} ${args.join(' ')}`);
      if (tool === 'sinfo') return Promise.resolve(answer('a\nb*\n'));
      if (tool === 'sacctmgr') return Promise.resolve(answer('\nproj\n'));
      return Promise.resolve(
        answer(args[0] === 'ok.sh' ? 'Submitted batch job 77\n' : '', args[0] === 'ok.sh'),
      );
    };
    expect(await detectPartition(exec)).toBe('b');
    expect(await detectAccount(exec, { USER: 'me' })).toBe('proj');
    expect(await submitBatch('ok.sh', exec)).toEqual({ jobId: '77', output: 'Submitted batch job 77' });
    expect(await submitBatch('bad.sh', exec)).toEqual({ error: 'sbatch bad.sh: exited 1: boom' });
    expect(calls).toContain('sacctmgr show assoc user=me format=Account%30 --noheader --parsable2');
  });

  it('quotes every value so bash sees it unchanged', () => {
    for (const s of ["it's", 'a b $HOME', 'plain/path-1.yaml', '']) {
      const r = spawnSync('bash', ['-c', `printf %s ${sq(s)}`], { encoding: 'utf8' });
      expect(r.stdout).toBe(s);
    }
  });

  it('is valid bash; the log copy expands %j/%x inside the job only', () => {
    const script = batchScript(base);
    expect(spawnSync('bash', ['-n'], { input: script }).status).toBe(0);
    const copy = script.split('\n').find((l) => l.includes('cp -f') && l.includes('.out'))!;
    const r = spawnSync(
      'bash',
      [
        '-c',
        `set -- ${copy
          .trim()
          .replace(/^cp -f /, '')
          .replace(/ 2>\/dev\/null$/, '')}; printf '%s\\n' "$@"`,
      ],
      {
        encoding: 'utf8',
        env: { SLURM_JOB_ID: '42', SLURM_JOB_NAME: 'j', run_dir: '/r' },
      },
    );
    expect(r.stdout.split('\n').slice(0, 3)).toEqual(['/w/logs dir/42-j.out', '/w/logs/42.err', '/r/']);
    expect(script).toContain(`RUN_ARGS=(--file '/w/it'\\''s here.yaml' --set 'MSG=a b $HOME'`);
  });

  it('the composed recipe sits beside the script', () => {
    expect(composedPathFor('/x/job.sh')).toBe('/x/job.yaml');
    expect(composedPathFor('/x/job')).toBe('/x/job.yaml');
  });

  it('batch --ssh: the script writes the session exit record however it ends (here: sflow fails)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sflow-exit-record-'));
    try {
      const exitFile = join(dir, 'state dir', 'exit.json');
      mkdirSync(join(dir, 'state dir'));
      const script = batchScript({
        ...base,
        sflow: ['/bin/false'],
        files: [],
        workspaceDir: dir,
        outputDir: join(dir, 'out'),
        output: join(dir, 'o.log'),
        error: join(dir, 'o.log'),
        exitFile,
      });
      expect(batchScript(base)).not.toMatch(/sflow_exit_record/);
      const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 10_000 });
      expect(r.status).toBe(1);
      const rec = JSON.parse(readFileSync(exitFile, 'utf8')) as Record<string, unknown>;
      expect(rec).toMatchObject({ code: 1, state: 'failed' });
      expect(String(rec.ended)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
