/**
 * A GPU claim is released only when the claimed processes are gone, not merely the driver (issue
 * 9): a run's task that ignores SIGTERM holds two (fake) GPUs; its driver is SIGKILLed. While the
 * task still runs (the launcher's grace), the registry does not reap the run's record, so no other
 * run can be granted those GPUs; once the launcher has killed the group and exited, it is reaped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reapDead } from '../../src/gpu/registry.js';
import { processesWith, until } from '../conformance/procs.js';
import { BIN, REPO } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-gpu-lost-'));
const registry = join(dir, 'registry');
const marker = `gpulost${process.pid}x${Math.floor(Math.random() * 1e6)}`;
const env = {
  ...process.env,
  PATH: `${join(REPO, 'assets', 'test-bin')}:${process.env.PATH}`,
  FAKE_NVIDIA_SMI_GPUS: '2',
  SFLOW_GPU_RESERVATION_DIR: registry,
  SFLOW_RUN_INDEX_DIR: join(dir, 'index'),
  SFLOW_TASK_OUTPUT: 'never',
  NO_COLOR: '1',
};
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const records = (): string[] => readdirSync(registry).filter((n) => n.endsWith('.json'));

describe('GPU claims of a SIGKILLed driver', () => {
  it('are not reaped while the run’s task still runs, and are once the lifeline stopped it', async () => {
    const cwd = join(dir, 'a');
    mkdirSync(cwd);
    const bin = join(cwd, marker);
    writeFileSync(bin, readFileSync('/bin/sleep'), { mode: 0o755 });
    writeFileSync(
      join(cwd, 'a.yaml'),
      `version: "0.1"
workflow:
  name: a
  tasks:
    - name: hold
      resources:
        gpus: {count: 2}
      script:
        - "trap '' TERM"
        - "${bin} 300"
`,
    );
    const proc = spawn(process.execPath, [BIN, 'run', '-f', 'a.yaml'], { cwd, env, stdio: 'ignore' });
    children.push(proc);
    await until(
      () => processesWith(marker).length > 0 && records().length === 1,
      60_000,
      'the task on its GPUs',
    );
    const record = JSON.parse(readFileSync(join(registry, records()[0] ?? ''), 'utf8')) as {
      pid: number;
      keeper?: { pid: number };
    };
    expect(record.pid).toBe(proc.pid);
    expect(record.keeper?.pid).toBeGreaterThan(0);

    proc.kill('SIGKILL');
    await new Promise((r) => proc.once('exit', r));
    // the driver is gone, its TERM-ignoring task is not (the launcher waits the 5 s grace)
    expect(processesWith(marker).length).toBeGreaterThan(0);
    expect(await reapDead(registry)).toEqual([]);
    expect(records()).toHaveLength(1);

    await until(() => processesWith(marker).length === 0, 5_000 + 2_000, 'the task stopped by the lifeline');
    // the launcher exits once its last group is gone: the run reaper's `sflow recover` ends last
    await until(() => !isAlive(record.keeper?.pid ?? 0), 60_000, 'the launcher to exit');
    const reaped = await reapDead(registry);
    expect(reaped.map((r) => r.pid)).toEqual([proc.pid]);
    expect(records()).toEqual([]);
  }, 60_000);
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
