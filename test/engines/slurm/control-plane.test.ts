/**
 * Slurm control-plane calls are bounded and traced: when `scontrol show node` fails (a shim first
 * on PATH makes it exit 1, the real Slurm answers everything else), node discovery falls back to
 * one `srun` per node printing the Slurm node name (not the host name: here both nodes share one
 * host), the run still completes, and the failed call is in
 * command_trace.jsonl and in the "External Command Health" section of sflow_summary.log.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeWithEngines } from '../helpers/engines.js';
import { TAG, cancelNamed, clusterFragment, jobsNamed, slurm, until } from './slurm-helpers.js';
import { newCwd, runSflow } from './sflow-cli.js';

const dirs: string[] = [];
afterAll(async () => {
  if (!slurm.skip) await cancelNamed(TAG);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function failingShowNode(dir: string): string {
  const bin = join(dir, 'shim-bin');
  mkdirSync(bin);
  const real = String(slurm.childEnv().PATH ?? process.env.PATH)
    .split(':')
    .map((p) => join(p, 'scontrol'))
    .find((p) => {
      try {
        return readFileSync(p).length > 0;
      } catch {
        return false;
      }
    });
  writeFileSync(
    join(bin, 'scontrol'),
    `#!/bin/sh\nif [ "$1 $2 $3" = "-o show node" ]; then echo "scontrol: error: simulated outage" >&2; exit 1; fi\nexec '${real}' "$@"\n`,
  );
  chmodSync(join(bin, 'scontrol'), 0o755);
  return bin;
}

describeWithEngines('Slurm control-plane calls', [slurm], () => {
  it('a failing scontrol: discovery falls back to srun, the run completes, the call is traced', async () => {
    const cwd = newCwd(dirs);
    const job = `${TAG}-trace`;
    const frag = clusterFragment(cwd, { jobName: job, nodes: 2 });
    writeFileSync(
      join(cwd, 'wf.yaml'),
      "version: '0.1'\nworkflow:\n  name: traced\n  tasks:\n    - name: hi\n      script: ['echo hi from $SFLOW_TASK_NODE_INDEX']\n",
    );
    const bin = failingShowNode(cwd);
    const r = await runSflow(['run', '-f', frag, '-f', join(cwd, 'wf.yaml')], {
      cwd,
      env: { PATH: `${bin}:${String(slurm.childEnv().PATH ?? process.env.PATH)}` },
    });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = r.runDir();
    // the task spans both discovered nodes
    const log = readFileSync(join(run, 'hi', 'hi.log'), 'utf8');
    expect(log).toContain('hi from 0');
    expect(log).toContain('hi from 1');
    const trace = readFileSync(join(run, 'command_trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const failed = trace.filter(
      (t) => t.tool === 'scontrol' && (t.args as string[]).join(' ').includes('show node') && t.ok === false,
    );
    expect(failed.length, JSON.stringify(trace)).toBeGreaterThan(0);
    expect(JSON.stringify(failed[0])).toContain('simulated outage');
    const summary = readFileSync(join(run, 'sflow_summary.log'), 'utf8');
    const health = summary.slice(summary.indexOf('External Command Health'));
    expect(health).toContain('scontrol');
    await until(`squeue empty of ${job}`, async () => (await jobsNamed(job)).length === 0, 10_000);
  });
});
