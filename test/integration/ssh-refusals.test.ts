/**
 * What --ssh does not cover yet is refused by name before any connection: `sflow batch` (and
 * `batch --ssh`) does not exist in this version, `compose --ssh` does not take the bulk options,
 * `run --ssh` does not take --resume. The destination is never contacted.
 */
import { describe, expect, it } from 'vitest';
import { sflowInProcess } from '../helpers/cli-inprocess.js';

describe('--ssh refusals', () => {
  it('batch --ssh is refused as not in this version, not as an unknown option', async () => {
    const r = await sflowInProcess(['batch', '--ssh', 'me@nowhere.invalid', '-f', 'x.yaml']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Not supported in this version: 'sflow batch' \(and 'batch --ssh'\)/);
    expect(r.stderr).toMatch(/hint: use sflow run/);
    expect(r.stderr).not.toMatch(/unknown option/);
  });

  it('batch stays out of the help', async () => {
    const r = await sflowInProcess(['--help']);
    expect(r.stdout).toMatch(/\bwatch\b/);
    expect(r.stdout).not.toMatch(/\bbatch\b/);
  });

  it('compose --ssh with --bulk-input is a usage error, before any connection', async () => {
    const r = await sflowInProcess(['compose', '--ssh', 'me@nowhere.invalid', '--bulk-input', 'rows.csv']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/compose --ssh does not take --bulk-input, --row or --validate/);
    expect(r.stderr).not.toMatch(/\[ssh\] 1\/4 connect/);
  });

  it('run --ssh with --resume is a usage error, before any connection', async () => {
    const r = await sflowInProcess(['run', '--ssh', 'me@nowhere.invalid', '--resume', 'sflow_output/x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/run --ssh does not take --resume or --force/);
    expect(r.stderr).not.toMatch(/\[ssh\] 1\/4 connect/);
  });
});
