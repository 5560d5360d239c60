/** A small monitored local run (fake nvidia-smi with two GPUs on PATH) for the report tests. */
import { join } from 'node:path';
import { REPO } from './cli.js';

export const MONITORED = `version: "0.1"
workflow:
  name: monitored
  monitor: { interval: 500 }
  tasks:
    - name: load
      resources: { gpus: { count: 2 } }
      script:
        - sleep 2
    - name: after
      depends_on: [load]
      script:
        - sleep 1
`;

export const MONITOR_ENV = {
  PATH: `${join(REPO, 'assets', 'test-bin')}:${process.env.PATH}`,
  SFLOW_GPU_RESERVATION: '0',
  FAKE_NVIDIA_SMI_GPUS: '2',
};
