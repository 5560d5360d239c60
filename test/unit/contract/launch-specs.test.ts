import { describe, expect, it } from 'vitest';
import { launchSpecs, operatorOf } from '../../../src/operators/index.js';
import type { OperatorInput } from '../../../src/operators/types.js';

const input = (over: Partial<OperatorInput> = {}): OperatorInput => ({
  task: 'srv',
  type: 'bash',
  config: {},
  script: 'echo hi',
  nodes: [
    { name: 'h0', ip: '10.0.0.1', index: 0 },
    { name: 'h1', ip: '10.0.0.2', index: 1 },
  ],
  gpus: [0, 1],
  env: { SFLOW_TASK_NODE_INDEX: '0', SFLOW_TASK_NUM_NODES: '2' },
  allocationId: '0',
  backendConfig: {},
  ...over,
});

describe('launch specs per node', () => {
  it('a per-node operator gives one spec per node, each with its own node index', () => {
    const op = operatorOf('docker_run')!;
    const specs = launchSpecs(
      op,
      input({ type: 'docker_run', config: { image: 'img:1', mounts: ['/a:/a'] } }),
    );
    expect(
      specs.map((s) => [s.node?.name, s.nodeIndex, s.env.SFLOW_TASK_NODE_INDEX, s.env.SFLOW_TASK_NODE_NAME]),
    ).toEqual([
      ['h0', 0, '0', 'h0'],
      ['h1', 1, '1', 'h1'],
    ]);
    expect(specs[1]).toMatchObject({ image: 'img:1', mounts: ['/a:/a'], devices: ['0', '1'] });
    expect(specs[0].argv.slice(0, 2)).toEqual(['docker', 'run']);
  });

  it('a spanning operator gives one spec on the first node, node index 0', () => {
    const specs = launchSpecs(operatorOf('bash')!, input());
    expect(specs).toHaveLength(1);
    expect(specs[0]).toMatchObject({ nodeIndex: 0, argv: ['bash', '-c', 'echo hi'] });
    expect(specs[0].env.SFLOW_TASK_NODE_INDEX).toBe('0');
  });

  it('an unknown operator type is not in the registry (the plan reports it, located)', () => {
    expect(operatorOf('no_such')).toBeUndefined();
    expect(operatorOf('toString')).toBeUndefined();
  });
});
