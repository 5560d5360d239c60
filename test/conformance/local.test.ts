import { LocalBackend, localNodes } from '../../src/backends/local/local-backend.js';
import { describe, expect, it } from 'vitest';
import { describeBackendConformance } from './backend.conformance.js';

describeBackendConformance(
  'local',
  () =>
    new LocalBackend({
      name: 'local',
      type: 'local',
      isDefault: true,
      placeholder: false,
      nodes: [],
      config: { nodes: 2, gpus_per_node: 4 },
    }),
  { localProcesses: true },
);

describe('local backend specifics', () => {
  it('allocates synthetic localhost nodes', async () => {
    const b = new LocalBackend({
      name: 'box',
      type: 'local',
      isDefault: true,
      placeholder: false,
      nodes: [],
      config: { nodes: 3, gpus_per_node: 4 },
    });
    expect(await b.allocate()).toEqual([
      { name: 'localhost', ip: '127.0.0.1', index: 0, numGpus: 4 },
      { name: 'localhost-1', ip: '127.0.0.1', index: 1, numGpus: 4 },
      { name: 'localhost-2', ip: '127.0.0.1', index: 2, numGpus: 4 },
    ]);
    expect(localNodes(0, null)).toEqual([{ name: 'localhost', ip: '127.0.0.1', index: 0, numGpus: null }]);
    expect(b.capabilities()).toMatchObject({
      defaultOperator: 'bash',
      gpuReservationRegistry: false,
      failFastDefault: false,
      batch: false,
    });
  });
});
