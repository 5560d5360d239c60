/**
 * `sflow batch` without a cluster (artifacts-batch.md C10): the generated script (#SBATCH lines,
 * node count from the recipe or an expression with --set, verbatim -e lines, forwarded flags),
 * --dry-run, refusals (--submit without -o, a failing dry-run, --row without --bulk-input) and
 * the bulk CSV rules. Partition and account are always given, so no Slurm command runs; sbatch
 * itself is exercised on the real test cluster (test/engines/slurm/batch.test.ts).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasStackTrace, sflow } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const WF = `version: '0.1'
variables:
  N: {value: 1, type: integer}
  MSG: {value: hi}
workflow:
  name: bwf
  tasks:
    - name: a
      script: ["echo \${{ variables.MSG }}"]
backends:
  - name: cluster
    type: slurm
    default: true
    partition: p
    account: a
    time: '00:10:00'
    nodes: \${{ variables.N * 2 }}
    gpus_per_node: 2
`;

function fixture(files: Record<string, string> = {}): string {
  const d = mkdtempSync(join(tmpdir(), 'sflow-batch-'));
  dirs.push(d);
  writeFileSync(join(d, 'wf.yaml'), WF);
  for (const [k, v] of Object.entries(files)) writeFileSync(join(d, k), v);
  return d;
}

// no Slurm on PATH: nothing may be auto-detected or submitted by accident
const env = { PATH: '/usr/bin:/bin', SLURM_JOB_ID: '', SLURM_JOBID: '' };
const batch = (cwd: string, args: string[]) =>
  sflow(['batch', '-p', 'gpu', '-A', 'proj', ...args], { cwd, env });

describe('sflow batch: the script', () => {
  it('prints the script: #SBATCH lines in order, nodes from an expression with --set, no GPU line', () => {
    const d = fixture();
    const r = batch(d, [
      'wf.yaml',
      '--set',
      'N=3',
      '--time',
      '01:00:00',
      '-e',
      '--exclusive',
      '-e',
      '--segment=4',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const sbatch = r.stdout.split('\n').filter((l) => l.startsWith('#SBATCH'));
    expect(sbatch).toEqual([
      '#SBATCH --job-name=sflow',
      `#SBATCH --output=${d}/sflow_output/%j-sflow-submit.out`,
      `#SBATCH --error=${d}/sflow_output/%j-sflow-submit.err`,
      '#SBATCH --mem=0',
      '#SBATCH --partition=gpu',
      '#SBATCH --account=proj',
      '#SBATCH --nodes=6',
      '#SBATCH --time=01:00:00',
      '#SBATCH --exclusive',
      '#SBATCH --segment=4',
    ]);
    expect(r.stdout).not.toMatch(/#SBATCH --(gres|gpus)/);
    expect(r.stdout).toContain(`RUN_ARGS=(--file ${d}/wf.yaml --set N=3 --workspace-dir ${d}`);
    expect(r.stdout).toContain('run --dry-run "${RUN_ARGS[@]}"');
    expect(r.stderr).toContain('-o/--sbatch-path');
    expect(readdirSync(d)).toEqual(['wf.yaml']);
  });

  it('-J becomes the one #SBATCH --job-name; -a/--artifact is forwarded to the run line (C6 items 2, 6)', () => {
    const d = fixture({
      'art.yaml': `${WF}artifacts:\n  - name: MODEL\n    uri: fs:///nonexistent-sflow-model\n`,
    });
    mkdirSync(join(d, 'model dir'));
    const uri = `fs://${d}/model dir`;
    const r = batch(d, ['art.yaml', '-J', 'my-job', '-a', `MODEL=${uri}`, '--artifact', `MODEL=${uri}`]);
    expect(r.code, r.stderr).toBe(0);
    const names = r.stdout.split('\n').filter((l) => l.startsWith('#SBATCH --job-name'));
    expect(names).toEqual(['#SBATCH --job-name=my-job']);
    expect(r.stdout.split('\n').find((l) => l.startsWith('#SBATCH'))).toBe('#SBATCH --job-name=my-job');
    // after --file/--set and before --workspace-dir, shell-quoted (the value has a space), once per flag
    expect(r.stdout).toContain(
      `RUN_ARGS=(--file ${d}/art.yaml --artifact 'MODEL=${uri}' --artifact 'MODEL=${uri}' --workspace-dir ${d}`,
    );
  });

  it('without -a the artifact check of the dry-run refuses the recipe (the override above is what made it pass)', () => {
    const d = fixture({
      'art.yaml': `${WF}artifacts:\n  - name: MODEL\n    uri: fs:///nonexistent-sflow-model\n`,
    });
    const r = batch(d, ['art.yaml', '-J', 'my-job']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('/nonexistent-sflow-model');
    expect(r.stdout).not.toContain('#SBATCH');
  });

  it('forwards --skip-artifact-check, monitors and -G (as the planning topology, not an #SBATCH line)', () => {
    const d = fixture();
    const r = batch(d, [
      '-f',
      'wf.yaml',
      '--skip-artifact-check',
      '--enable-task-monitor',
      'a',
      '-G',
      '4',
      '-N',
      '1',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/RUN_ARGS=\(.*--skip-artifact-check --enable-task-monitor a\)/);
    expect(r.stdout).toContain('export SFLOW_SLURM_GPUS_PER_NODE=4');
    expect(r.stdout).toContain('#SBATCH --nodes=1');
    expect(r.stdout).not.toMatch(/#SBATCH --(gres|gpus)/);
    expect(r.stderr).toContain('gpus_per_node 2 → 4');
  });

  it('-o writes the script (mode 755) and the composed recipe beside it; --dry-run writes nothing', () => {
    const d = fixture();
    const dry = batch(d, ['wf.yaml', '-o', 'job.sh', '--submit', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('#!/bin/bash');
    expect(existsSync(join(d, 'job.sh'))).toBe(false);
    const r = batch(d, ['wf.yaml', '-o', 'job.sh', '-r']);
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(join(d, 'job.sh')).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(d, 'job.sh'), 'utf8')).toContain('#SBATCH --nodes=2');
    expect(readFileSync(join(d, 'job.yaml'), 'utf8')).toContain('echo hi');
  });
});

describe('sflow batch: refusals', () => {
  it('--submit without -o: a usage error (exit 2), nothing submitted', () => {
    const r = batch(fixture(), ['wf.yaml', '--submit']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^✗ Usage error: /);
    expect(r.stderr).toContain('--submit needs -o/--sbatch-path');
  });

  it('a dry-run failure: exit 1, no script, the located detail', () => {
    const d = fixture({
      bad: WF.replace('script: ["echo ${{ variables.MSG }}"]', 'depends_on: [nope]\n      script: [x]'),
    });
    const r = batch(d, ['bad', '-o', 'job.sh']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/bad:\d+:\d+/);
    expect(r.stderr).toContain('Aborting sbatch generation');
    expect(hasStackTrace(r.stderr)).toBe(false);
    expect(existsSync(join(d, 'job.sh'))).toBe(false);
  });

  it('a recipe without a slurm backend: exit 1, no script', () => {
    const d = fixture({
      'local.yaml': "version: '0.1'\nworkflow:\n  name: l\n  tasks:\n    - {name: a, script: ['true']}\n",
    });
    const r = batch(d, ['local.yaml', '-N', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no backend that runs under sbatch (types: local)');
    expect(r.stdout).toBe('');
  });

  it('--row without --bulk-input: a usage error (exit 2)', () => {
    const r = batch(fixture(), ['wf.yaml', '--row', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--row selects rows of --bulk-input');
  });

  it('without -p/-A the recipe backend gives them (nothing asked of Slurm); the script says so', () => {
    const r = sflow(['batch', 'wf.yaml'], { cwd: fixture(), env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('#SBATCH --partition=p\n');
    expect(r.stdout).toContain('#SBATCH --account=a\n');
    expect(r.stdout).toMatch(
      /^# {3}--partition=p\s+← the recipe: backend 'cluster' partition \(.*wf\.yaml:14:16\)$/m,
    );
    expect(r.stderr).toContain(
      "ℹ from the recipe's slurm backend 'cluster': partition p, account a, time 00:10:00",
    );
  });

  it('no partition anywhere and no Slurm to ask: a usage error (exit 2) naming the flag and the recipe', () => {
    const d = fixture({ 'bare.yaml': WF.replace('    partition: p\n', "    partition: ''\n") });
    const r = sflow(['batch', 'bare.yaml'], { cwd: d, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "✗ Usage error: no partition for the job: no -p/--partition given, the recipe's slurm backend 'cluster' gives none, and sinfo (the default partition) found none",
    );
    expect(r.stdout).toBe('');
  });
});

const rows = (lines: string[]) => ['sflow_config_file,MSG,SLURM_NODES', ...lines].join('\n') + '\n';

describe('sflow batch --bulk-input', () => {
  it('one script per selected row, named by what differs; results.csv lists only those rows', () => {
    const d = fixture({
      'rows.csv': rows(['wf.yaml,a,1', 'wf.yaml,b,2', 'wf.yaml,c,1', 'wf.yaml,d,2', 'wf.yaml,e,1']),
    });
    const r = batch(d, ['-b', 'rows.csv', '--row', '2:4']);
    expect(r.code, r.stderr).toBe(0);
    const [bulk] = readdirSync(join(d, 'sflow_output'));
    expect(bulk).toMatch(/^bulk_input_\d{8}-\d{6}$/);
    const dir = join(d, 'sflow_output', bulk);
    expect(readdirSync(dir).sort()).toEqual([
      '1n_c_003.sh',
      '1n_c_003.yaml',
      '2n_b_002.sh',
      '2n_b_002.yaml',
      'results.csv',
    ]);
    const script = readFileSync(join(dir, '2n_b_002.sh'), 'utf8');
    expect(script).toContain('#SBATCH --nodes=2');
    // the job runs the row's composed copy: its override is in the copy, not on the command line
    expect(script).toContain(`RUN_ARGS=(--file ${join(dir, '2n_b_002.yaml')} `);
    expect(script).not.toContain('--set MSG=b');
    expect(readFileSync(join(dir, '2n_b_002.yaml'), 'utf8')).toMatch(/- name: MSG\n\s+value: b\n/);
    const results = readFileSync(join(dir, 'results.csv'), 'utf8').trim().split('\n');
    expect(results).toHaveLength(3);
    expect(results[1]).toContain(',b,2,not submitted,');
    expect(r.stdout).toContain('add --submit');
  });

  it('--dry-run prints every row script and writes nothing', () => {
    const d = fixture({ 'rows.csv': rows(['wf.yaml,a,1', 'wf.yaml,b,2']) });
    const r = batch(d, ['-b', 'rows.csv', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.match(/^#!\/bin\/bash$/gm)).toHaveLength(2);
    expect(existsSync(join(d, 'sflow_output'))).toBe(false);
  });

  it('refuses an unknown column and a blank sflow_config_file (the CSV: exit 1) and a --nodes that disagrees with it (usage: 2)', () => {
    const unknown = batch(fixture({ 'rows.csv': 'sflow_config_file,BOGUS,SLURM_NODES\nwf.yaml,1,1\n' }), [
      '-b',
      'rows.csv',
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^✗ Configuration error: .*rows\.csv:1:1: .*'BOGUS'/m);
    const blank = batch(fixture({ 'rows.csv': rows(['wf.yaml,a,1', ',b,1']) }), ['-b', 'rows.csv']);
    expect(blank.code).toBe(1);
    expect(blank.stderr).toContain('sflow_config_file');
    expect(hasStackTrace(blank.stderr)).toBe(false);
    const d = fixture({ 'rows.csv': rows(['wf.yaml,a,2']) });
    const clash = batch(d, ['-b', 'rows.csv', '--nodes', '4']);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toMatch(/^✗ Usage error: --nodes 4 disagrees/m);
    expect(existsSync(join(d, 'sflow_output'))).toBe(false);
  });

  it('without a node column or --nodes: refused, naming the columns', () => {
    const r = batch(fixture({ 'rows.csv': 'sflow_config_file,MSG\nwf.yaml,a\n' }), ['-b', 'rows.csv']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('SLURM_NODES, NUM_SLURM_NODES, NUM_NODES');
  });
});

describe('sflow batch --bulk-submit', () => {
  it('one job per self-contained recipe of a folder or pattern; other YAML is ignored', () => {
    const d = fixture({ 'fragment.yaml': 'backends: []\n' });
    mkdirSync(join(d, 'jobs'));
    writeFileSync(join(d, 'jobs', 'small run.yaml'), WF);
    writeFileSync(
      join(d, 'jobs', 'big.yml'),
      WF.replace('N: {value: 1, type: integer}', 'N: {value: 2, type: integer}'),
    );
    writeFileSync(join(d, 'jobs', 'notes.yaml'), '- a list\n');
    const r = batch(d, ['-B', 'jobs', '-B', 'frag*.yaml']);
    expect(r.code, r.stderr).toBe(0);
    const [bulk] = readdirSync(join(d, 'sflow_output'));
    expect(bulk).toMatch(/^bulk_submit_\d{8}-\d{6}$/);
    const dir = join(d, 'sflow_output', bulk);
    expect(readdirSync(dir).sort()).toEqual([
      'big.sh',
      'big.yaml',
      'results.csv',
      'small_run.sh',
      'small_run.yaml',
    ]);
    expect(readFileSync(join(dir, 'big.sh'), 'utf8')).toContain('#SBATCH --nodes=4');
    expect(readFileSync(join(dir, 'small_run.sh'), 'utf8')).toContain('#SBATCH --job-name=small_run');
    const results = readFileSync(join(dir, 'results.csv'), 'utf8').trim().split('\n');
    expect(results[0]).toBe('sflow_config_file,job_name,slurm_job_id,sflow_output_dir,status');
    expect(results).toHaveLength(3);
  });

  it('nothing that is a recipe: a usage error (exit 2)', () => {
    const d = fixture({ 'notes.yaml': 'a: 1\n' });
    const r = batch(d, ['-B', 'notes.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no recipe found');
  });
});
