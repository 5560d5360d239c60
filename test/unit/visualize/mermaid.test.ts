import { describe, expect, it } from 'vitest';
import { toMermaid } from '../../../src/visualize/index.js';
import type { DagView } from '../../../src/visualize/index.js';
import { twentyTaskView } from './fixtures.js';

/** node declarations `id["text"]` → id → text */
function mermaidNodes(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^\s*(\w+)\["([^"]*)"\]$/gm)].map((m) => [m[1], m[2]]));
}

describe('toMermaid', () => {
  const view = twentyTaskView();
  const text = toMermaid(view);
  const nodes = mermaidNodes(text);
  const idOf = (label: string): string => [...nodes].find(([, t]) => t.split(' gpus=')[0] === label)![0];

  it('is a top-down flowchart with start and stop nodes', () => {
    expect(text.split('\n')[0]).toBe('flowchart TD');
    expect(text).toContain('start(["start"])');
    expect(text).toContain('stop(["stop"])');
  });

  it('declares one safe, unique id per task', () => {
    expect(nodes.size).toBe(view.nodes.length);
    for (const id of nodes.keys()) expect(id).toMatch(/^[A-Za-z0-9_]+$/);
    expect(idOf('end')).not.toBe('end');
    expect(nodes.get(idOf('model server'))).toBe('model server gpus=4');
  });

  it('contains every dependency as a labelled edge plus the start/stop links', () => {
    for (const e of view.edges) {
      const from = idOf(e.from.replace(/"/g, '#quot;'));
      const to = idOf(e.to.replace(/"/g, '#quot;'));
      expect(text).toContain(`${from} -->|${e.label}| ${to}`);
    }
    expect(text).toContain(`${idOf('model server')} -->|Ready| ${idOf('client_2')}`);
    expect(text).toContain(`start --> ${idOf('prepare-data')}`);
    expect(text).toContain(`${idOf('report')} --> stop`);
    expect(text).not.toContain(`start --> ${idOf('pre.process')}`);
  });

  it('puts each replica group in a subgraph titled with its base name', () => {
    const sub = text.match(/subgraph (\w+) \["bench"\]\n([\s\S]*?)\n {2}end/);
    expect(sub).not.toBeNull();
    expect(sub![2]).toContain(`${idOf('bench_0')} -->|Completed| ${idOf('bench_1')}`);
    expect(text).toMatch(/subgraph \w+ \["client"\]/);
  });

  it('escapes label characters Mermaid would interpret', () => {
    expect(text).toContain('["lint #quot;quoted#quot;"]');
    const t = toMermaid({ workflow: 'w', nodes: [{ id: 'a<b>#1', label: 'a<b>#1' }], edges: [] });
    expect(t).toContain('["a#lt;b#gt;#35;1"]');
  });

  it('dedupes ids that sanitise to the same text', () => {
    const v: DagView = {
      workflow: 'w',
      nodes: ['a-b', 'a.b', 'a b'].map((id) => ({ id, label: id })),
      edges: [{ from: 'a-b', to: 'a.b', label: 'Completed' }],
    };
    const n = mermaidNodes(toMermaid(v));
    expect(new Set(n.keys()).size).toBe(3);
    expect([...n.values()].sort()).toEqual(['a b', 'a-b', 'a.b']);
  });

  it('writes variables as %% comments only when asked', () => {
    expect(text).not.toContain('%% variables');
    const t = toMermaid(view, { variables: { MODEL: 'tiny', MULTI: 'a\nb' } });
    expect(t).toContain('%%   MODEL = tiny');
    expect(t).toContain('%%   MULTI = a\\nb');
    for (const line of t.split('\n'))
      if (line.includes('MULTI')) expect(line.trim().startsWith('%%')).toBe(true);
  });
});
