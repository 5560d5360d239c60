import type { DagEdge, DagNode, DagView } from '../../../src/visualize/dag-view.js';

/**
 * A 20-task workflow: a prepare → preprocess chain, a server with a readiness probe (Ready edges),
 * 4 parallel replicas `client_0..3`, 3 sequential replicas `bench_0..2`, task names with `-`, `.`
 * and spaces, and a fan-in report.
 */
export function twentyTaskView(): DagView {
  const nodes: DagNode[] = [];
  const edges: DagEdge[] = [];
  const add = (id: string, extra: Partial<DagNode> = {}): void => {
    nodes.push({ id, label: id, ...extra });
  };
  const dep = (from: string, to: string, label: DagEdge['label'] = 'Completed'): void => {
    edges.push({ from, to, label });
  };
  add('prepare-data');
  add('pre.process');
  dep('prepare-data', 'pre.process');
  add('model server', { gpus: 4 });
  dep('pre.process', 'model server');
  for (let i = 0; i < 4; i++) {
    add(`client_${i}`, { group: 'client', gpus: 1 });
    dep('model server', `client_${i}`, 'Ready');
  }
  for (let i = 0; i < 3; i++) {
    add(`bench_${i}`, { group: 'bench', sequential: true });
    if (i === 0) dep('model server', 'bench_0', 'Ready');
    else dep(`bench_${i - 1}`, `bench_${i}`);
  }
  for (let i = 0; i < 5; i++) {
    add(`eval_${i}`);
    dep('bench_2', `eval_${i}`);
  }
  add('lint "quoted"');
  add('docs\\build');
  add('end');
  dep('docs\\build', 'end');
  add('aggregate');
  for (let i = 0; i < 4; i++) dep(`client_${i}`, 'aggregate');
  for (let i = 0; i < 5; i++) dep(`eval_${i}`, 'aggregate');
  add('report');
  dep('aggregate', 'report');
  dep('lint "quoted"', 'report');
  return { workflow: 'demo-wf', nodes, edges };
}

export function chainView(n: number): DagView {
  const nodes: DagNode[] = Array.from({ length: n }, (_, i) => ({ id: `t${i}`, label: `t${i}` }));
  const edges: DagEdge[] = [];
  for (let i = 1; i < n; i++) edges.push({ from: `t${i - 1}`, to: `t${i}`, label: 'Completed' });
  return { workflow: 'chain', nodes, edges };
}
