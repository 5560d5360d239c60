/**
 * Honest health (issue 24 item 5) on the local backend: a healthy run's summary says the external
 * commands are OK — here there are none, and the verdict says so rather than nothing. (Docker,
 * Slurm and the Kubernetes emulator: their engine suites check a healthy run reports OK and that
 * one injected failure makes it DEGRADED, naming the call.)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sflow } from '../helpers/cli.js';
import { onlyRunDir } from '../helpers/run-dir.js';
import { scratchDir } from '../helpers/scratch.js';

describe('External Command Health on the local backend', () => {
  it('a healthy run reports OK', () => {
    const dir = scratchDir('sflow-health-');
    writeFileSync(
      join(dir, 'r.yaml'),
      'version: "0.1"\nworkflow:\n  name: healthy\n  tasks:\n    - name: a\n      script: [echo a]\n    - name: b\n      depends_on: [a]\n      script: [echo b]\n',
    );
    const r = sflow(['run', '-f', 'r.yaml'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const summary = readFileSync(join(onlyRunDir(join(dir, 'sflow_output')), 'sflow_summary.log'), 'utf8');
    expect(summary).toMatch(/External Command Health\n-+\nVerdict: OK \(no external commands\)\n/);
  });
});
