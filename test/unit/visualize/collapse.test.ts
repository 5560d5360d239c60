import { describe, expect, it } from 'vitest';
import { collapseReplicaGroups, renderSvg, toDot, toMermaid } from '../../../src/visualize/index.js';
import type { DagEdge, DagNode, DagView } from '../../../src/visualize/index.js';
import { twentyTaskView } from './fixtures.js';
import { svgTexts, xmlRoot } from './xml-check.js';

function wideView(replicas: number): DagView {
  const nodes: DagNode[] = [
    { id: 'server', label: 'server', gpus: 8 },
    ...Array.from({ length: replicas }, (_, r) => ({
      id: `rep_${r}`,
      label: `rep_${r}`,
      group: 'rep',
      gpus: 1,
    })),
    { id: 'sink', label: 'sink' },
  ];
  const edges: DagEdge[] = [];
  for (let r = 0; r < replicas; r++) {
    edges.push(
      { from: 'server', to: `rep_${r}`, label: 'Ready' },
      { from: `rep_${r}`, to: 'sink', label: 'Completed' },
    );
  }
  return { workflow: 'wide', nodes, edges };
}

describe('collapseReplicaGroups', () => {
  it('turns groups larger than the threshold into one node and redirects their edges', () => {
    const v = collapseReplicaGroups(twentyTaskView(), 3);
    expect(v.nodes.map((n) => n.id)).toContain('client[0..3]');
    expect(v.nodes.find((n) => n.id === 'client[0..3]')).toEqual({
      id: 'client[0..3]',
      label: 'client[0..3] ×4',
      group: 'client',
      sequential: false,
      gpus: 1,
    });
    expect(v.nodes.filter((n) => n.group === 'bench')).toHaveLength(3);
    expect(v.edges.filter((e) => e.to === 'client[0..3]')).toEqual([
      { from: 'model server', to: 'client[0..3]', label: 'Ready' },
    ]);
    expect(v.edges.filter((e) => e.from === 'client[0..3]')).toEqual([
      { from: 'client[0..3]', to: 'aggregate', label: 'Completed' },
    ]);
    expect(v.nodes).toHaveLength(20 - 3);
  });

  it('drops the chain inside a collapsed sequential group and keeps Ready when any member edge is Ready', () => {
    const v = collapseReplicaGroups(twentyTaskView(), 2);
    const bench = v.nodes.find((n) => n.group === 'bench')!;
    expect(bench).toMatchObject({ id: 'bench[0..2]', sequential: true });
    expect(v.edges.some((e) => e.from === bench.id && e.to === bench.id)).toBe(false);
    expect(v.edges).toContainEqual({ from: 'model server', to: 'bench[0..2]', label: 'Ready' });
    expect(v.edges.filter((e) => e.from === 'bench[0..2]')).toHaveLength(5);
  });

  it('returns the view unchanged when no group is large enough', () => {
    const view = twentyTaskView();
    expect(collapseReplicaGroups(view, 10)).toBe(view);
  });

  it('is used by toDot and toMermaid when asked', () => {
    const dot = toDot(twentyTaskView(), { collapseGroupsOver: 3 });
    expect(dot).toMatch(
      /subgraph "cluster_client" \{\n.*\n {4}"client\[0\.\.3\]" \[label="client\[0\.\.3\] ×4 gpus=1"\];/,
    );
    expect(dot).not.toContain('"client_0"');
    const mmd = toMermaid(twentyTaskView(), { collapseGroupsOver: 3 });
    expect(mmd).toContain('["client[0..3] ×4 gpus=1"]');
    expect(mmd).not.toContain('["client_0');
  });

  it('keeps a 10,000-replica workflow drawable: collapsed DOT renders to a small SVG', async () => {
    const view = wideView(10_000);
    const full = toDot(view);
    expect(full.match(/ -> /g)).toHaveLength(20_000 + 2);
    const svg = await renderSvg(toDot(view, { collapseGroupsOver: 50 }));
    expect(xmlRoot(svg)).toBe('svg');
    expect(svgTexts(svg)).toContain('rep[0..9999] ×10000 gpus=1');
  });

  it('lays out graphs past the large-graph threshold with iteration limits', async () => {
    const view = wideView(160);
    const dot = toDot(view);
    expect(dot).toContain('newrank=true, nslimit=2, mclimit=0.5');
    const texts = svgTexts(await renderSvg(dot));
    expect(texts).toContain('rep_159 gpus=1');
  });
});
