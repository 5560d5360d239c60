import { describe, expect, it } from 'vitest';
import { dotQuote, toDot } from '../../../src/visualize/index.js';
import type { DagView } from '../../../src/visualize/index.js';
import { chainView, twentyTaskView } from './fixtures.js';

/** `"a" -> "b" [label="X"]` lines of a DOT text as `a -> b : X` (label optional). */
function dotEdges(dot: string): string[] {
  const unq = (s: string): string => s.slice(1, -1).replace(/\\(["\\])/g, '$1');
  return [
    ...dot.matchAll(/^\s*("(?:[^"\\]|\\.)*") -> ("(?:[^"\\]|\\.)*")(?: \[label=("(?:[^"\\]|\\.)*")\])?;$/gm),
  ].map((m) => `${unq(m[1])} -> ${unq(m[2])}${m[3] ? ` : ${unq(m[3])}` : ''}`);
}

describe('toDot', () => {
  const view = twentyTaskView();
  const dot = toDot(view);
  const edges = dotEdges(dot);

  it('links start to every task without dependencies and every task without dependents to stop', () => {
    const starts = edges.filter((e) => e.startsWith('start -> ')).sort();
    expect(starts).toEqual(['start -> docs\\build', 'start -> lint "quoted"', 'start -> prepare-data']);
    const stops = edges.filter((e) => e.endsWith(' -> stop')).sort();
    expect(stops).toEqual(['end -> stop', 'report -> stop']);
  });

  it('draws every dependency once with its Ready/Completed label', () => {
    for (const e of view.edges) expect(edges).toContain(`${e.from} -> ${e.to} : ${e.label}`);
    expect(edges.length).toBe(view.edges.length + 3 + 2);
    expect(edges).toContain('model server -> client_0 : Ready');
    expect(edges).toContain('bench_0 -> bench_1 : Completed');
  });

  it('groups replicas in cluster_<base> subgraphs labelled with the base name, chain edges inside', () => {
    const cluster = dot.match(/subgraph "cluster_bench" \{([\s\S]*?)\n {2}\}/);
    expect(cluster).not.toBeNull();
    expect(cluster![1]).toContain('label="bench"');
    expect(cluster![1]).toContain('"bench_0" -> "bench_1"');
    for (let i = 0; i < 3; i++) expect(cluster![1]).toContain(`"bench_${i}" [label="bench_${i}"]`);
    const clients = dot.match(/subgraph "cluster_client" \{([\s\S]*?)\n {2}\}/);
    expect(clients![1]).toContain('"client_3" [label="client_3 gpus=1"]');
    expect(clients![1]).not.toContain('->');
  });

  it('labels nodes with the task name plus gpus=<n> when GPUs are planned', () => {
    expect(dot).toContain('"model server" [label="model server gpus=4"]');
    expect(dot).toContain('"prepare-data" [label="prepare-data"]');
  });

  it('escapes quotes and backslashes in identifiers', () => {
    expect(dot).toContain('"lint \\"quoted\\"" [label="lint \\"quoted\\""]');
    expect(dot).toContain('"docs\\\\build" -> "end"');
    expect(dotQuote('a\nb "c" \\d')).toBe('"a\\nb \\"c\\" \\\\d"');
  });

  it('adds a variables note cluster only when variables are given', () => {
    expect(dot).not.toContain('cluster_variables');
    const withVars = toDot(view, { variables: { MODEL: 'tiny "x"', N: '3' } });
    expect(withVars).toMatch(/subgraph "cluster_variables" \{[\s\S]*label="MODEL = tiny \\"x\\"\\lN = 3\\l"/);
  });

  it('keeps start/stop distinct from tasks named start or stop', () => {
    const v: DagView = {
      workflow: 'w',
      nodes: [
        { id: 'start', label: 'start' },
        { id: 'stop', label: 'stop' },
      ],
      edges: [{ from: 'start', to: 'stop', label: 'Completed' }],
    };
    const e = dotEdges(toDot(v));
    expect(e).toEqual(['__start__ -> start', 'start -> stop : Completed', 'stop -> __stop__']);
  });

  it('links start to stop for an empty workflow and ignores edges to unknown tasks', () => {
    expect(dotEdges(toDot({ workflow: 'w', nodes: [], edges: [] }))).toEqual(['start -> stop']);
    const v = chainView(2);
    v.edges.push({ from: 'ghost', to: 't1', label: 'Ready' });
    expect(dotEdges(toDot(v))).toEqual(['start -> t0', 't0 -> t1 : Completed', 't1 -> stop']);
  });
});
