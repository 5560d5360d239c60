import { describe, expect, it } from 'vitest';
import { toAscii } from '../../../src/visualize/index.js';
import type { DagEdge, DagNode, DagView } from '../../../src/visualize/index.js';
import { chainView, twentyTaskView } from './fixtures.js';

/** `Layer k` → the task lines under it (connector stripped, spaces collapsed). */
function layers(text: string): string[][] {
  const out: string[][] = [];
  for (const line of text.split('\n').slice(1)) {
    if (/^(Layer \d+|Unordered)/.test(line)) out.push([]);
    else if (/^[├└]─ /.test(line)) out.at(-1)!.push(line.slice(3).replace(/\s+/g, ' ').trim());
  }
  return out;
}

function replicaView(count: number, sequential: boolean): DagView {
  const nodes: DagNode[] = [{ id: 'server', label: 'server', gpus: 2 }];
  const edges: DagEdge[] = [];
  for (let i = 0; i < count; i++) {
    nodes.push({ id: `w_${i}`, label: `w_${i}`, group: 'w', sequential, gpus: 1 });
    edges.push(
      sequential && i > 0
        ? { from: `w_${i - 1}`, to: `w_${i}`, label: 'Completed' }
        : { from: 'server', to: `w_${i}`, label: 'Ready' },
    );
  }
  nodes.push({ id: 'sink', label: 'sink' });
  for (let i = 0; i < count; i++) edges.push({ from: `w_${i}`, to: 'sink', label: 'Completed' });
  return { workflow: 'rep', nodes, edges };
}

describe('toAscii', () => {
  it('draws a chain as one layer per task', () => {
    const text = toAscii(chainView(3));
    expect(text.split('\n')[0]).toBe('DAG chain: 3 tasks, 2 edges, 3 layers');
    expect(layers(text)).toEqual([['t0'], ['t1 ← t0'], ['t2 ← t1']]);
    expect(text).toContain('└─ t1  ← t0');
  });

  it('draws a diamond with both branches on one layer and the join below', () => {
    const v: DagView = {
      workflow: 'diamond',
      nodes: ['a', 'b', 'c', 'd'].map((id) => ({ id, label: id })),
      edges: [
        { from: 'a', to: 'b', label: 'Ready' },
        { from: 'a', to: 'c', label: 'Completed' },
        { from: 'b', to: 'd', label: 'Completed' },
        { from: 'c', to: 'd', label: 'Completed' },
      ],
    };
    const text = toAscii(v);
    expect(layers(text)).toEqual([['a'], ['b ← a (ready)', 'c ← a'], ['d ← b, c']]);
    expect(text).toContain('├─ b  ← a (ready)');
    expect(text).toContain('└─ c  ← a');
  });

  it('places a task on the layer after its deepest dependency', () => {
    const v = chainView(3);
    v.nodes.push({ id: 'x', label: 'x' });
    v.edges.push({ from: 't0', to: 'x', label: 'Completed' }, { from: 't2', to: 'x', label: 'Completed' });
    expect(layers(toAscii(v))[3]).toEqual(['x ← t0, t2']);
  });

  it('lists small replica groups task by task and collapses large ones into base[0..N-1]', () => {
    const small = layers(toAscii(replicaView(3, false)));
    expect(small[1]).toEqual([
      'w_0 gpus=1 ← server (ready)',
      'w_1 gpus=1 ← server (ready)',
      'w_2 gpus=1 ← server (ready)',
    ]);
    const big = toAscii(replicaView(50, false));
    expect(layers(big)).toEqual([
      ['server gpus=2'],
      ['w[0..49] ×50 gpus=1 each ← server (ready)'],
      ['sink ← w[0..49]'],
    ]);
    expect(layers(toAscii(replicaView(3, false), { collapse: 'always' }))[1]).toEqual([
      'w[0..2] ×3 gpus=1 each ← server (ready)',
    ]);
    expect(layers(toAscii(replicaView(50, false), { collapse: 'never' }))[1]).toHaveLength(50);
  });

  it('marks sequential groups and keeps the chain inside the collapsed line', () => {
    const text = toAscii(replicaView(10, true));
    expect(layers(text)).toEqual([
      ['server gpus=2'],
      ['w[0..9] ×10 sequential gpus=1 each ← server (ready)'],
      ['sink ← w[0..9]'],
    ]);
    expect(layers(toAscii(replicaView(3, true)))).toEqual([
      ['server gpus=2'],
      ['w_0 gpus=1 ← server (ready)'],
      ['w_1 gpus=1 ← w_0'],
      ['w_2 gpus=1 ← w_1'],
      ['sink ← w_0, w_1, w_2'],
    ]);
  });

  it('shortens long dependency lists', () => {
    const text = toAscii(twentyTaskView());
    expect(text).toMatch(/aggregate\s+← client_0, client_1, client_2, client_3, \+5 more/);
  });

  it('caps the output and says how much was left out', () => {
    const text = toAscii(chainView(500));
    const lines = text.trimEnd().split('\n');
    expect(lines.length).toBe(1 + 200 + 1);
    expect(lines.at(-1)).toBe(`… (+${1000 - 200} more lines)`);
    const short = toAscii(chainView(500), { maxLines: 10 }).trimEnd().split('\n');
    expect(short).toHaveLength(12);
  });

  it('reports tasks on a dependency cycle instead of looping', () => {
    const v = chainView(2);
    v.nodes.push({ id: 'p', label: 'p' }, { id: 'q', label: 'q' });
    v.edges.push({ from: 'p', to: 'q', label: 'Completed' }, { from: 'q', to: 'p', label: 'Completed' });
    const text = toAscii(v);
    expect(text).toContain('Unordered (dependency cycle)');
    expect(layers(text).at(-1)).toEqual(['p ← q', 'q ← p']);
  });

  it('handles an empty workflow', () => {
    expect(toAscii({ workflow: 'w', nodes: [], edges: [] })).toBe(
      'DAG w: 0 tasks, 0 edges, 0 layers\n(no tasks)\n',
    );
  });

  it('stays compact for 1,000 tasks with 10,000 replicas', () => {
    const nodes: DagNode[] = [];
    const edges: DagEdge[] = [];
    for (let t = 0; t < 1000; t++) {
      nodes.push({ id: `task${t}`, label: `task${t}` });
      if (t > 0) edges.push({ from: `task${t - 1}`, to: `task${t}`, label: 'Completed' });
    }
    for (let r = 0; r < 10_000; r++) {
      nodes.push({ id: `rep_${r}`, label: `rep_${r}`, group: 'rep', gpus: 1 });
      edges.push({ from: 'task0', to: `rep_${r}`, label: 'Ready' });
    }
    const started = performance.now();
    const text = toAscii({ workflow: 'big', nodes, edges });
    const ms = performance.now() - started;
    console.log(`toAscii: ${nodes.length} nodes, ${edges.length} edges in ${ms.toFixed(1)} ms`);
    expect(text.split('\n')[0]).toBe('DAG big: 11000 tasks, 10999 edges, 1000 layers');
    expect(text).toContain('rep[0..9999]  ×10000  gpus=1 each  ← task0 (ready)');
    expect(text.trimEnd().split('\n')).toHaveLength(202);
  });
});
