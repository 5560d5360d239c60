import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  listGpus,
  parseComputeAppsCsv,
  parseGpuCsv,
  parseListGpus,
  queryComputeApps,
  queryGpus,
} from '../../../src/gpu/nvidia-smi.js';
import { SflowError } from '../../../src/config/errors.js';

const FAKE_DIR = path.resolve(import.meta.dirname, '../../../assets/test-bin');
const fakeEnv = (extra: Record<string, string> = {}) => ({
  PATH: `${FAKE_DIR}:${process.env.PATH ?? ''}`,
  ...extra,
});

describe('parsing nvidia-smi CSV', () => {
  it('reads --query-gpu rows, including [N/A], units, a header and names with commas', () => {
    const text = [
      'index, uuid, name, memory.total [MiB], memory.used [MiB]',
      '0, GPU-3a6b1c2d-0e4f-5a6b-7c8d-9e0f1a2b3c4d, NVIDIA H100 80GB HBM3, 81559, 4',
      '',
      '1, GPU-5e6f7a8b-9c0d-1e2f-3a4b-5c6d7e8f9a0b, NVIDIA A100-SXM4-80GB, [N/A], [N/A]',
      '2, GPU-11111111-2222-3333-4444-555555555555, Odd, Name, With Comma, 40960 MiB, 1024 MiB',
    ].join('\n');
    expect(parseGpuCsv(text)).toEqual([
      {
        index: 0,
        uuid: 'GPU-3a6b1c2d-0e4f-5a6b-7c8d-9e0f1a2b3c4d',
        name: 'NVIDIA H100 80GB HBM3',
        memoryTotalMiB: 81559,
        memoryUsedMiB: 4,
      },
      {
        index: 1,
        uuid: 'GPU-5e6f7a8b-9c0d-1e2f-3a4b-5c6d7e8f9a0b',
        name: 'NVIDIA A100-SXM4-80GB',
        memoryTotalMiB: null,
        memoryUsedMiB: null,
      },
      {
        index: 2,
        uuid: 'GPU-11111111-2222-3333-4444-555555555555',
        name: 'Odd, Name, With Comma',
        memoryTotalMiB: 40960,
        memoryUsedMiB: 1024,
      },
    ]);
  });

  it('reads --query-compute-apps rows and ignores "No running processes found"', () => {
    const text = 'GPU-aaaa, 4242, 2048\nGPU-bbbb, 77, [N/A]\nNo running processes found\n';
    expect(parseComputeAppsCsv(text)).toEqual([
      { gpuUuid: 'GPU-aaaa', pid: 4242, usedMemoryMiB: 2048 },
      { gpuUuid: 'GPU-bbbb', pid: 77, usedMemoryMiB: null },
    ]);
    expect(parseComputeAppsCsv('')).toEqual([]);
  });

  it('reads -L and skips MIG child lines', () => {
    const text = [
      'GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-e86e8ae7ba17)',
      '  MIG 3g.20gb     Device  0: (UUID: MIG-4e4e4e4e-1111-2222-3333-444444444444)',
      'GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-6e6ea0d6-d33d-2b2c-524d-e86e8ae7ba18)',
    ].join('\n');
    expect(parseListGpus(text).map((g) => [g.index, g.uuid])).toEqual([
      [0, 'GPU-5d5ba0d6-d33d-2b2c-524d-e86e8ae7ba17'],
      [1, 'GPU-6e6ea0d6-d33d-2b2c-524d-e86e8ae7ba18'],
    ]);
  });
});

describe('querying the fake nvidia-smi', () => {
  it('lists the configured GPUs with distinct UUIDs', async () => {
    const gpus = await queryGpus({ env: fakeEnv({ FAKE_NVIDIA_SMI_GPUS: '3' }) });
    expect(gpus?.map((g) => g.index)).toEqual([0, 1, 2]);
    expect(new Set(gpus?.map((g) => g.uuid)).size).toBe(3);
    expect(gpus?.[0]).toMatchObject({
      name: 'NVIDIA H100 80GB HBM3',
      memoryTotalMiB: 81559,
      memoryUsedMiB: 0,
    });
    const listed = await listGpus({ env: fakeEnv({ FAKE_NVIDIA_SMI_GPUS: '3' }) });
    expect(listed?.map((g) => g.uuid)).toEqual(gpus?.map((g) => g.uuid));
  });

  it('reports busy processes and their memory on the GPU', async () => {
    const env = fakeEnv({ FAKE_NVIDIA_SMI_APPS: '1:4242:2048' });
    const [gpus, apps] = [await queryGpus({ env }), await queryComputeApps({ env })];
    expect(apps).toEqual([{ gpuUuid: gpus?.[1].uuid, pid: 4242, usedMemoryMiB: 2048 }]);
    expect(gpus?.[1].memoryUsedMiB).toBe(2048);
  });

  it('returns [] when the driver sees no devices and null without nvidia-smi', async () => {
    expect(await queryGpus({ env: fakeEnv({ FAKE_NVIDIA_SMI_GPUS: '0' }) })).toEqual([]);
    expect(await queryGpus({ bin: path.join(FAKE_DIR, 'no-such-nvidia-smi') })).toBeNull();
  });

  it('throws (not "no GPUs") when nvidia-smi fails or hangs', async () => {
    const failed = queryGpus({ env: fakeEnv({ FAKE_NVIDIA_SMI_FAIL: '9' }) });
    await expect(failed).rejects.toBeInstanceOf(SflowError);
    await expect(queryGpus({ env: fakeEnv({ FAKE_NVIDIA_SMI_FAIL: '9' }) })).rejects.toThrow(
      /exit 9.*NVIDIA driver/,
    );
    const t0 = Date.now();
    await expect(queryGpus({ env: fakeEnv({ FAKE_NVIDIA_SMI_DELAY: '5' }), timeoutMs: 300 })).rejects.toThrow(
      /did not answer within/,
    );
    expect(Date.now() - t0).toBeLessThan(4_000);
  });
});
