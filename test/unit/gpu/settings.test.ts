import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseWaitForGpus, registrySettings, registrySkipReason } from '../../../src/gpu/settings.js';
import { isProcessAlive, processStartTime } from '../../../src/util/process-liveness.js';
import { deadPid } from './helpers.js';

describe('registry settings from the environment', () => {
  it('has the documented defaults', () => {
    expect(registrySettings({})).toEqual({
      enabled: true,
      dir: path.join(os.tmpdir(), 'sflow-gpu-reservations'),
      busyMemMiB: 512,
      ignoreForeign: false,
      waitSeconds: undefined,
    });
  });

  it('reads every SFLOW_GPU_* variable', () => {
    const s = registrySettings({
      SFLOW_GPU_RESERVATION: '0',
      SFLOW_GPU_RESERVATION_DIR: '/tmp/x',
      SFLOW_GPU_BUSY_MEM_MIB: '2048',
      SFLOW_GPU_IGNORE_FOREIGN: '1',
      SFLOW_WAIT_FOR_GPUS: '90',
    });
    expect(s).toEqual({
      enabled: false,
      dir: '/tmp/x',
      busyMemMiB: 2048,
      ignoreForeign: true,
      waitSeconds: 90,
    });
  });

  it('lets SFLOW_WAIT_FOR_GPUS override the backend field; any value (even empty) waits', () => {
    expect(registrySettings({}, 30).waitSeconds).toBe(30);
    expect(registrySettings({ SFLOW_WAIT_FOR_GPUS: '5' }, 30).waitSeconds).toBe(5);
    expect(registrySettings({ SFLOW_WAIT_FOR_GPUS: '' }, 30).waitSeconds).toBe(0);
    expect(registrySettings({ SFLOW_WAIT_FOR_GPUS: '0' }).waitSeconds).toBe(0);
  });

  it('rejects malformed values naming their source', () => {
    expect(() => parseWaitForGpus('600s', '--wait-for-gpus', 'usage')).toThrow(
      "--wait-for-gpus must be a number of seconds (0 = wait forever), got '600s'",
    );
    expect(() => parseWaitForGpus('-1', '--wait-for-gpus')).toThrow(/got '-1'/);
    expect(() => registrySettings({ SFLOW_WAIT_FOR_GPUS: 'soon' })).toThrow(/SFLOW_WAIT_FOR_GPUS/);
    expect(() => registrySettings({ SFLOW_GPU_BUSY_MEM_MIB: '1G' })).toThrow(/SFLOW_GPU_BUSY_MEM_MIB/);
  });

  it('says why the registry is skipped', () => {
    const base = { env: {}, nodes: 1, nvidiaSmi: true, platform: 'linux' as const };
    expect(registrySkipReason(base)).toBeNull();
    expect(registrySkipReason({ ...base, env: { SFLOW_GPU_RESERVATION: '0' } })).toContain(
      'SFLOW_GPU_RESERVATION=0',
    );
    expect(registrySkipReason({ ...base, pool: true })).toContain('pool');
    expect(registrySkipReason({ ...base, nodes: 2 })).toContain('2 nodes');
    expect(registrySkipReason({ ...base, nvidiaSmi: false })).toContain('nvidia-smi');
    expect(registrySkipReason({ ...base, platform: 'win32' })).toContain('Windows');
  });
});

describe('process liveness', () => {
  it('reads the start time of a live process and treats dead or reused PIDs as gone', () => {
    const start = processStartTime(process.pid);
    expect(Number.isInteger(start)).toBe(true);
    expect(isProcessAlive(process.pid, start)).toBe(true);
    expect(isProcessAlive(process.pid, (start as number) + 1)).toBe(false);
    expect(isProcessAlive(deadPid(), null)).toBe(false);
    expect(isProcessAlive(-1, null)).toBe(false);
  });

  it('sees a killed process go away (another process reaps it)', async () => {
    const child = spawn('sh', ['-c', 'sleep 30 & echo $!; exec true'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const grandchild = await new Promise<number>((resolve) =>
      child.stdout.once('data', (d) => resolve(Number(String(d)))),
    );
    expect(isProcessAlive(grandchild, processStartTime(grandchild))).toBe(true);
    process.kill(grandchild, 'SIGKILL');
    const deadline = Date.now() + 5_000;
    while (isProcessAlive(grandchild, null) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(isProcessAlive(grandchild, null)).toBe(false);
  });
});
