/**
 * What --ssh does not cover is refused by name before any connection: `batch --ssh` takes no bulk
 * mode and no local script/log paths and needs --submit (its --dry-run prints the script without
 * connecting), `compose --ssh` does not take the bulk options, `run --ssh` does not take --resume.
 * The destination is never contacted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sflowInProcess } from '../helpers/cli-inprocess.js';

describe('--ssh refusals', () => {
  it('batch --ssh takes no bulk mode, -o, -O or -E, and needs --submit: usage errors, no connection', async () => {
    for (const extra of [
      ['--bulk-input', 'rows.csv', '--submit'],
      ['-B', 'jobs/', '--submit'],
      ['-o', 'job.sh', '--submit'],
      ['-O', 'out.txt', '--submit'],
      [],
    ]) {
      const r = await sflowInProcess(['batch', '--ssh', 'me@nowhere.invalid', '-f', 'x.yaml', ...extra]);
      expect(r.code, extra.join(' ')).toBe(2);
      expect(r.stderr).toMatch(
        /batch --ssh (does not take|submits the job on the remote host: add --submit)/,
      );
      expect(r.stderr).not.toMatch(/\[ssh\] 1\/4 connect/);
    }
  });

  it('batch --ssh --dry-run prints the script without connecting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sflow-batch-ssh-'));
    try {
      writeFileSync(
        join(dir, 'wf.yaml'),
        "version: '0.1'\nworkflow:\n  name: w\n  tasks:\n    - name: a\n      script: [echo a]\n" +
          "backends:\n  - {name: c, type: slurm, default: true, nodes: 2, partition: '', account: a, time: '00:05:00'}\n",
      );
      const r = await sflowInProcess(
        ['batch', join(dir, 'wf.yaml'), '--ssh', 'me@nowhere.invalid', '-A', 'acct', '--dry-run'],
        { cwd: dir },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/#SBATCH --nodes=2/);
      expect(r.stdout).toMatch(/#SBATCH --account=acct/); // -A wins over the recipe's account
      // the recipe gives no partition: detected on the login node at submit
      expect(r.stdout).toMatch(/#SBATCH --partition=\(detected on me@nowhere.invalid at submit\)/);
      expect(r.stdout).toMatch(/^# {3}--time=00:05:00 +← the recipe: backend 'c' time/m);
      expect(r.stdout).toMatch(/<remote root>\/runs\/ssh-\S+\/state\/exit\.json/);
      expect(r.stderr).toMatch(/--dry-run: nothing sent to me@nowhere.invalid/);
      expect(r.stderr).not.toMatch(/\[ssh\] 1\/4 connect/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('batch takes --ssh in its help', async () => {
    const r = await sflowInProcess(['--help']);
    expect(r.stdout).toMatch(/\bwatch\b/);
    expect(r.stdout).toMatch(/\bbatch\b/);
    const b = await sflowInProcess(['batch', '--help']);
    expect(b.stdout).toMatch(/--ssh <destination/);
    expect(b.stdout).toMatch(/--ssh-remote-root/);
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
