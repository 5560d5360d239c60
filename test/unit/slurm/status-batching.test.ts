/**
 * The Slurm backend asks Slurm about its attempts once per poll tick, however many there are
 * (contract v2: one batched status call per backend per tick). A fake Slurm stands in for the CLI
 * (every call goes through the backend's `exec`): `scontrol -o show step <job>` lists the steps
 * whose srun clients it was told about, `scancel` is accepted. The srun clients are real
 * processes (a stand-in `srun` that sleeps), so their pids are what the backend matches steps by.
 * For N = 1 and N = 50 live attempts the status queries per tick (`scontrol … show step`, squeue)
 * must be the same: one while some step is still unnamed, none once every step is known, and one
 * for N handles of a dead driver read from its ledger.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { handleKey, type BackendContext, type TaskHandle } from '../../../src/backends/backend.js';
import { slurmKind } from '../../../src/backends/slurm/kind.js';
import type { SlurmExec } from '../../../src/backends/slurm/slurm-exec.js';
import { SlurmBackend } from '../../../src/backends/slurm/slurm-backend.js';
import type { ExecOutcome } from '../../../src/util/bounded-exec.js';
import type { PlannedBackend } from '../../../src/plan/types.js';
import { plannedTask } from '../../helpers/planned-task.js';

const JOB = '4242';
const host = hostname().split('.')[0];
const dir = mkdtempSync(join(tmpdir(), 'sflow-slurm-status-'));
const srun = join(dir, 'srun');
writeFileSync(srun, '#!/bin/sh\nexec sleep 300\n');
chmodSync(srun, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const out = (stdout: string, exitCode = 0): ExecOutcome => ({
  exitCode,
  signal: null,
  stdout,
  stderr: '',
  durationMs: 0,
  timedOut: false,
  attempts: 1,
  ok: exitCode === 0,
});

/** A fake Slurm CLI: answers from its own state, counts every status query it receives. */
class FakeSlurm {
  /** srun client pids whose steps exist */
  readonly steps: number[] = [];
  statusQueries = 0;
  readonly exec: SlurmExec = async (tool, args) => {
    if (tool === 'squeue' || (tool === 'scontrol' && args.includes('step'))) {
      this.statusQueries++;
      if (tool === 'squeue') return out('');
      const lines = this.steps.map(
        (pid, i) =>
          `StepId=${JOB}.${i} UserId=0 StartTime=2026-12-01T00:00:00 TimeLimit=UNLIMITED State=RUNNING Partition=debug NodeList=n1 Nodes=1 Name=t SrunHost:Pid=${host}:${pid}`,
      );
      return out(lines.join('\n') + '\n');
    }
    if (tool === 'scontrol' && args[0] === 'getaddrs') return out('n1: 127.0.0.1\n');
    if (tool === 'scancel') return out('');
    return out('', 1);
  };
}

const planned: PlannedBackend<'slurm'> = {
  name: 'cluster',
  type: 'slurm',
  isDefault: true,
  placeholder: false,
  nodes: [],
  config: { name: 'cluster', type: 'slurm', account: 'a', partition: 'p', time: '1', nodes: 1 },
  capabilities: slurmKind.capabilities,
};

const ctx = (runDir: string): BackendContext => ({
  runId: 'status-batching',
  runDir,
  log: () => undefined,
  options: {},
  // an allocation the driver runs in: no salloc
  env: { ...process.env, SLURM_JOB_ID: JOB, SLURM_JOB_NODELIST: 'n1' },
  gpuTasks: false,
});

/** status queries per tick for N live attempts: [steps unnamed, steps appear, all named, N ledger handles] */
async function queriesPerTick(n: number): Promise<number[]> {
  const runDir = join(dir, `n${n}`);
  mkdirSync(runDir);
  const slurm = new FakeSlurm();
  const b = new SlurmBackend(planned, ctx(runDir), slurm.exec);
  const never = new AbortController().signal;
  const { nodes } = await b.allocate(never, () => undefined);
  const handles: TaskHandle[] = [];
  try {
    for (let i = 0; i < n; i++) {
      mkdirSync(join(runDir, `t${i}`));
      const argv = [srun, '--jobid', JOB, 'bash', '-c', 'true'];
      const task = plannedTask(`t${i}`, { backend: 'cluster', backendType: 'slurm', argv, nodes }, runDir);
      const base = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
      const req = { task, attempt: 1, specs: task.launch, baseEnv: base, cwd: runDir, runDir };
      handles.push(await b.launch({ ...req, record: () => undefined }, never));
    }
    // one poll tick: the queries it made (the fake answers at once, so the tick's own calls are
    // all that happen between its start and its end; a background step scan cannot interleave)
    const tick = async (backend: SlurmBackend, fake: FakeSlurm, hs: TaskHandle[]) => {
      const before = fake.statusQueries;
      const s = await backend.poll(hs, AbortSignal.timeout(10_000));
      expect(s.size).toBe(hs.length);
      return { queries: fake.statusQueries - before, states: hs.map((h) => s.get(handleKey(h))!) };
    };
    const unnamed = await tick(b, slurm, handles);
    expect(unnamed.states.every((s) => s.state === 'SUBMITTED')).toBe(true);
    slurm.steps.push(...handles.map((h) => h.process!.pid));
    const appear = await tick(b, slurm, handles);
    expect(appear.states.map((s) => s.state)).toEqual(handles.map(() => 'RUNNING'));
    expect(new Set(appear.states.map((s) => s.named?.remoteIds[0])).size).toBe(n);
    const named = await tick(b, slurm, handles);
    expect(named.states.every((s) => s.state === 'RUNNING')).toBe(true);
    // another driver reading these handles from a ledger: Slurm's word only
    const records = handles.map((h, i) => ({ ...h, ...appear.states[i].named! }));
    const other = new FakeSlurm();
    other.steps.push(...slurm.steps);
    const reader = new SlurmBackend(planned, ctx(runDir), other.exec);
    const ledger = await tick(reader, other, records);
    expect(ledger.states.every((s) => s.state === 'RUNNING')).toBe(true);
    return [unnamed.queries, appear.queries, named.queries, ledger.queries];
  } finally {
    await b.stop(handles, { graceMs: 0, force: true }, AbortSignal.timeout(30_000));
    await b.release(never);
  }
}

describe('Slurm backend: one status query per poll tick, whatever the number of attempts', () => {
  it('N=1 and N=50 cost the same queries per tick: 1 (unnamed), 1 (named now), 0 (known), 1 (ledger)', async () => {
    const one = await queriesPerTick(1);
    const fifty = await queriesPerTick(50);
    expect(one).toEqual([1, 1, 0, 1]);
    expect(fifty).toEqual(one);
  }, 120_000);
});
