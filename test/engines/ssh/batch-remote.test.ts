/**
 * `sflow batch --ssh … --submit` against a real sshd and the Slurm test cluster, as the fixture
 * account whose login shell has no Node.js (so the copied single executable runs the job): a 3-task
 * Slurm recipe with an uploaded input is validated here, uploaded, submitted with sbatch over ssh
 * (partition detected over ssh), runs as a Slurm job, and its receipt works with `watch --once` and
 * `fetch --all`. The queue is empty afterwards.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sflow } from '../../helpers/cli.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { ensureExecutable, until } from './exe-helpers.js';

const ssh = engine('ssh');
const slurm = engine('slurm');

describeWithEngines(
  'sflow batch --ssh (real sshd + Slurm, remote account without Node.js)',
  [ssh, slurm],
  () => {
    const cfg = () => ssh.get('SFLOW_TEST_SSH_CONFIG');
    const dest = () => `${ssh.get('SFLOW_TEST_SSH_NONODE_USER')}@${ssh.get('SFLOW_TEST_SSH_ALIAS_B')}`;
    const sshText = () => `${dest()} -F ${cfg()}`;
    const remote = (cmd: string) =>
      spawnSync('ssh', ['-F', cfg(), dest(), cmd], { encoding: 'utf8', timeout: 60_000 });
    let local = ''; // made in beforeAll: the describe body runs even when the suite is skipped
    const tag = `sbs${process.pid % 100000}`;
    let root = '';
    let buildId = '';

    beforeAll(() => {
      local = mkdtempSync(join(tmpdir(), 'sflow-ssh-batch-'));
      buildId = ensureExecutable();
      root = remote('mktemp -d').stdout.trim();
      expect(root).toMatch(/^\/tmp\//);
      mkdirSync(join(local, 'data'));
      writeFileSync(join(local, 'data', 'input.txt'), 'uploaded from here\n');
    }, 300_000);
    afterAll(() => {
      if (root) remote(`scancel -n ${tag} 2>/dev/null; rm -rf ${root} "$HOME/.cache/sflow/exe/${buildId}"`);
      if (local) rmSync(local, { recursive: true, force: true });
    });

    it('submits a 3-task workflow over ssh; it runs as a Slurm job; watch and fetch read its receipt', async () => {
      expect(remote('command -v node || echo no-node').stdout.trim()).toBe('no-node');
      writeFileSync(
        join(local, 'wf.yaml'),
        `version: '0.1'
workflow:
  name: ${tag}
  name: ${tag}
  tasks:
    - name: a
      script: ["echo A $(id -un) > $SFLOW_TASK_OUTPUT_DIR/a.txt"]
    - name: b
      depends_on: [a]
      script: ["cp data/input.txt $SFLOW_TASK_OUTPUT_DIR/b.txt"]
    - name: c
      depends_on: [a]
      script: ["echo C $SLURM_JOB_ID > $SFLOW_TASK_OUTPUT_DIR/c.txt"]
artifacts:
  - name: input
    uri: fs://data
backends:
  - name: cluster
    type: slurm
    default: true
    partition: ''
    account: sflowtest
    time: '00:10:00'
    nodes: 1
`,
      );
      // no -p/-A: the account comes from the recipe, the (empty) partition from sinfo over ssh
      const args = ['batch', 'wf.yaml', '--ssh', sshText(), '--ssh-remote-root', root];
      const r = sflow([...args, '-J', tag, '--submit'], { cwd: local, timeoutMs: 180_000 });
      expect(r.code, r.stderr + r.stdout).toBe(0);
      // the duplicated key is a recipe warning, printed once (not again when the inputs are staged)
      expect(r.stderr.match(/duplicate key 'name'/g) ?? []).toHaveLength(1);
      expect(r.stderr).toMatch(
        /1\/4 connect[\s\S]*2\/4 sflow: .*\(copied\)[\s\S]*3\/4 inputs: recipe\.yaml \+ job\.sh \+ 1 file/,
      );
      expect(r.stderr).toMatch(/using partition '\w+' \(auto-detected by sinfo on /); // sinfo over ssh
      expect(r.stderr).not.toMatch(/using account/);
      const job = /Submitted batch job (\d+)/.exec(r.stdout)?.[1];
      expect(job, r.stdout).toBeDefined();
      const session = readdirSync(join(local, 'sflow_output')).find((d) => d.startsWith('ssh-'))!;
      const receipt = join(local, 'sflow_output', session, 'receipt.json');
      const script = readFileSync(join(local, 'sflow_output', session, 'job.sh'), 'utf8');
      expect(script).toMatch(/^# {3}--account=sflowtest\s+← the recipe: backend 'cluster' account/m);
      expect(script).toMatch(/^# {3}--partition=\w+\s+← sinfo on /m);
      expect(JSON.parse(readFileSync(receipt, 'utf8'))).toMatchObject({
        command: 'batch',
        job_id: job,
        remote_session: `${root}/runs/${session}`,
        state: 'running',
      });
      await until(
        `job ${job} to leave the queue`,
        async () => {
          const q = await slurm.exec('squeue', ['-h', '-j', job!, '-o', '%i']);
          return q.exitCode === 0 && !String(q.stdout).trim();
        },
        120_000,
      );
      const w = sflow(['watch', receipt, '--once'], { cwd: local });
      expect(w.code, w.stderr).toBe(0);
      expect(w.stdout).toMatch(/remote run completed \(exit 0\)\n$/);
      expect(JSON.parse(readFileSync(receipt, 'utf8'))).toMatchObject({ state: 'completed', exit_code: 0 });

      const all = join(local, 'fetched');
      const fe = sflow(['fetch', receipt, '--all', '-o', all], { cwd: local });
      expect(fe.code, fe.stderr).toBe(0);
      expect(readFileSync(join(all, 'controller.log'), 'utf8')).toContain('Workflow completed');
      const run = readdirSync(all).find((d) => d.startsWith(`${job}-`));
      expect(run, readdirSync(all).join(' ')).toBeDefined();
      const dir = join(all, run!);
      expect(readFileSync(join(dir, 'a', 'a.txt'), 'utf8')).toBe(
        `A ${ssh.get('SFLOW_TEST_SSH_NONODE_USER')}\n`,
      );
      expect(readFileSync(join(dir, 'b', 'b.txt'), 'utf8')).toBe('uploaded from here\n');
      expect(readFileSync(join(dir, 'c', 'c.txt'), 'utf8')).toBe(`C ${job}\n`);
      expect(existsSync(join(dir, 'recipe.yaml'))).toBe(true); // the job copied its workflow file in
      const q = await slurm.exec('squeue', ['-h', '-n', tag, '-o', '%i']);
      expect(String(q.stdout).trim()).toBe('');
    });
  },
);
