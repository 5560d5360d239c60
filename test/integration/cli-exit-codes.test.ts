/**
 * Exit codes and the one error shape across commands (README, "Exit codes" and "Errors"): a
 * mistake on the command line exits 2 as `✗ Usage error: …`, one in a recipe or a CSV exits 1 as
 * `✗ Configuration error: …` (located), never with a stack trace or `Error:`; commander's own
 * errors (unknown option, bad choice) take the same shape. Each case below exited 1, printed
 * `Error:`/commander's `error:`, or crashed with an internal error before.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasStackTrace, sflow } from '../helpers/cli.js';
import { sflowInProcess } from '../helpers/cli-inprocess.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-exit-codes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const put = (name: string, text: string) => writeFileSync(join(dir, name), text);
put(
  'wf.yaml',
  "version: '0.1'\nvariables:\n  X: {value: 1}\nworkflow:\n  name: w\n  tasks:\n    - {name: a, script: ['true']}\n",
);
put(
  'slurm.yaml',
  "version: '0.1'\nbackends:\n  - {name: c, type: slurm, default: true, nodes: 1, partition: p, account: a, time: 5}\n",
);
put('rows.csv', 'sflow_config_file,X,SLURM_NODES\nwf.yaml,2,1\n,3,1\n');
put('nonodes.csv', 'sflow_config_file,X\nwf.yaml,2\n');
put('a-file', 'not a folder\n');
const unwritable = join(dir, 'a-file', 'out');

type Case = [args: string[], code: 1 | 2, shape: RegExp];
const USAGE = /^✗ Usage error: /;
const CONFIG = /^✗ Configuration error: /;

const cases: Case[] = [
  [
    ['run', '-f', 'wf.yaml', '-s', 'WHO', '--dry-run'],
    2,
    /^✗ Usage error: Invalid variable override format 'WHO'/,
  ],
  [['run', '-f', 'wf.yaml', '-a', 'WHO', '--dry-run'], 2, USAGE],
  [['run', '-f', 'wf.yaml', '-s', 'NOPE=1', '--dry-run'], 2, /^✗ Usage error: Variable 'NOPE'/],
  [['run', '-f', 'wf.yaml', '-M', 'x', '--dry-run'], 2, /^✗ Usage error: --missable-tasks is only valid/],
  [['run', '-f', 'wf.yaml', '--wait-for-gpus', 'abc', '--dry-run'], 2, /^✗ Usage error: --wait-for-gpus/],
  [['run', '-f', 'wf.yaml', '--bogus'], 2, /^✗ Usage error: unknown option '--bogus'/],
  [['run', '-f', 'wf.yaml', '--log-level', 'loud'], 2, /^✗ Usage error: option '--log-level <level>'/],
  [['bogus'], 2, /^✗ Usage error: unknown command 'bogus'/],
  [['compose'], 2, /^✗ Usage error: no input files provided/],
  [['compose', '-f', 'wf.yaml', '--row', '1'], 2, USAGE],
  [['compose', '-f', 'wf.yaml', '-s', 'WHO'], 2, USAGE],
  [
    ['compose', '-f', 'wf.yaml', '-b', 'rows.csv'],
    1,
    /^✗ Configuration error: rows\.csv:3:1: row 2 has an empty/,
  ],
  [['compose', '-f', 'wf.yaml', '-b', 'missing.csv'], 2, /^✗ Usage error: missing\.csv: cannot read the CSV/],
  [
    ['compose', '-f', 'wf.yaml', '-o', join(unwritable, 'c.yaml')],
    2,
    /^✗ Usage error: cannot create the folder for -o/,
  ],
  [['batch', '-f', 'wf.yaml', '-f', 'slurm.yaml', '-s', 'WHO'], 2, USAGE],
  [['batch', '-b', 'rows.csv', '-f', 'slurm.yaml'], 1, CONFIG],
  [['batch', '-b', 'nonodes.csv', '-f', 'slurm.yaml'], 1, /^✗ Configuration error: .*nonodes\.csv:1:1: /],
  [['batch', '-b', 'missing.csv'], 2, USAGE],
  [['batch', '-B', 'nothing-here'], 2, /^✗ Usage error: --bulk-submit nothing-here: no recipe found/m],
  [['schema', '-o', join(unwritable, 's.json')], 2, /^✗ Usage error: cannot create the folder for -o/],
  [['recover', '--grace-seconds', 'abc'], 2, /^✗ Usage error: --grace-seconds abc/],
  [['visualize', '-f', 'wf.yaml', '-s', 'WHO'], 2, USAGE],
];

describe('exit codes and the error shape', () => {
  it.each(cases.map((c) => [c[0].join(' '), c] as const))('%s', async (_name, [args, code, shape]) => {
    // a private run index: a command that got as far as looking for lost runs finds none of others'
    const env = { PATH: '/usr/bin:/bin', SLURM_JOB_ID: '', SFLOW_RUN_INDEX_DIR: join(dir, 'runs') };
    const r = await sflowInProcess(args, { cwd: dir, env });
    expect(r.code, r.stderr).toBe(code);
    const firstError = r.stderr.split('\n').find((l) => l.startsWith('✗')) ?? '';
    expect(firstError, r.stderr).toMatch(shape);
    expect(r.stderr).not.toMatch(/^(Error|error): /m);
    expect(r.stderr).not.toContain('Internal error');
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it('end to end: the built CLI shapes a commander error the same way', () => {
    const r = sflow(['run', '--no-such-flag'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^✗ Usage error: unknown option '--no-such-flag'/);
  });
});
