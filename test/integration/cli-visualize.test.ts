/**
 * `sflow visualize` (spec cli.md §9.4) on a 20-task DAG written here: parallel and sequential
 * replicas, a readiness-probed service, a diamond. SVG and PNG are rendered in-process (no
 * system Graphviz), DOT and Mermaid carry the edges, the default path is under the output dir.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../helpers/scratch.js';
import { hasStackTrace, sflow } from '../helpers/cli.js';

const dir = scratchDir('sflow-viz-');
const RECIPE = `version: "0.1"
variables:
  WORKERS: {type: integer, value: 4}
workflow:
  name: dag20
  tasks:
    - name: prepare
      script: [echo prepare]
    - name: worker
      depends_on: [prepare]
      replicas: {count: "\${{ variables.WORKERS }}", policy: parallel}
      script: [echo worker]
    - name: epoch
      depends_on: [prepare]
      replicas: {count: 3, policy: sequential}
      script: [echo epoch]
    - name: server
      script: [python3 -m http.server 18123]
      probes:
        readiness:
          tcp_port: {port: 18123}
          timeout: 30
    - name: client_a
      depends_on: [server]
      script: [echo a]
    - name: client_b
      depends_on: [server]
      script: [echo b]
    - name: d_top
      depends_on: [worker, epoch]
      script: [echo top]
    - name: d_left
      depends_on: [d_top]
      script: [echo left]
    - name: d_right
      depends_on: [d_top]
      script: [echo right]
    - name: d_bottom
      depends_on: [d_left, d_right]
      script: [echo bottom]
    - name: report
      depends_on: [d_bottom, client_a, client_b]
      script: [echo report]
    - name: fanout
      depends_on: [report]
      replicas: {count: 3}
      script: [echo fan]
    - name: final
      depends_on: [fanout]
      script: [echo final]
`;
writeFileSync(join(dir, 'dag.yaml'), RECIPE);

const TASKS = [
  'prepare',
  ...[0, 1, 2, 3].map((i) => `worker_${i}`),
  ...[0, 1, 2].map((i) => `epoch_${i}`),
  'server',
  'client_a',
  'client_b',
  'd_top',
  'd_left',
  'd_right',
  'd_bottom',
  'report',
  ...[0, 1, 2].map((i) => `fanout_${i}`),
  'final',
];

/** [from, to, label] — every concrete edge of the expanded DAG */
const EDGES: [string, string, string][] = [
  ...[0, 1, 2, 3].map((i) => ['prepare', `worker_${i}`, 'Completed'] as [string, string, string]),
  ['prepare', 'epoch_0', 'Completed'],
  ['epoch_0', 'epoch_1', 'Completed'],
  ['epoch_1', 'epoch_2', 'Completed'],
  ['server', 'client_a', 'Ready'],
  ['server', 'client_b', 'Ready'],
  ...[0, 1, 2, 3].map((i) => [`worker_${i}`, 'd_top', 'Completed'] as [string, string, string]),
  ['epoch_2', 'd_top', 'Completed'],
  ['d_top', 'd_left', 'Completed'],
  ['d_top', 'd_right', 'Completed'],
  ['d_left', 'd_bottom', 'Completed'],
  ['d_right', 'd_bottom', 'Completed'],
  ['d_bottom', 'report', 'Completed'],
  ['client_a', 'report', 'Completed'],
  ['client_b', 'report', 'Completed'],
  ...[0, 1, 2].map((i) => ['report', `fanout_${i}`, 'Completed'] as [string, string, string]),
  ...[0, 1, 2].map((i) => [`fanout_${i}`, 'final', 'Completed'] as [string, string, string]),
];

function visualize(args: string[]) {
  const r = sflow(['visualize', '-f', 'dag.yaml', ...args], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  expect(hasStackTrace(r.stderr)).toBe(false);
  return r;
}

/** Tags open and close in order (comments, declarations and processing instructions aside). */
function wellFormedXml(text: string): string[] {
  const problems: string[] = [];
  const stack: string[] = [];
  const body = text.replace(/<!--[\s\S]*?-->/g, '').replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, '');
  for (const m of body.matchAll(/<([^>]*)>/g)) {
    const tag = m[1];
    if (tag.startsWith('?') || tag.startsWith('!')) continue;
    const name = /^\/?\s*([A-Za-z_][\w:.-]*)/.exec(tag)?.[1];
    if (!name) problems.push(`bad tag <${tag}>`);
    else if (tag.startsWith('/')) {
      const open = stack.pop();
      if (open !== name) problems.push(`</${name}> closes <${open}>`);
    } else if (!tag.endsWith('/')) stack.push(name);
  }
  if (stack.length) problems.push(`unclosed: ${stack.join(', ')}`);
  if (/<[^>]*$/.test(body)) problems.push('truncated tag at the end');
  return problems;
}

describe('sflow visualize on a 20-task DAG', () => {
  it('--format svg -o x.svg: well-formed SVG naming every task', () => {
    const r = visualize(['--format', 'svg', '-o', 'x.svg']);
    expect(r.stdout).toBe(`✓ Saved to ${join(dir, 'x.svg')}\n`);
    const svg = readFileSync(join(dir, 'x.svg'), 'utf8');
    expect(svg).toMatch(/<svg[\s>]/);
    expect(wellFormedXml(svg)).toEqual([]);
    expect(TASKS).toHaveLength(20);
    for (const t of TASKS) expect(svg, t).toContain(`>${t}</text>`);
    // start/stop nodes and the edge labels are drawn too
    expect(svg).toContain('>start</text>');
    expect(svg).toContain('>Ready</text>');
  });

  it('--format png: a PNG with a non-empty IHDR', () => {
    visualize(['--format', 'png', '-o', 'x.png']);
    const png = readFileSync(join(dir, 'x.png'));
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
    expect(png.readUInt32BE(16)).toBeGreaterThan(0);
    expect(png.readUInt32BE(20)).toBeGreaterThan(0);
    expect(png.length).toBeGreaterThan(1000);
  });

  it('--format dot contains every edge with its Ready/Completed label, and start/stop', () => {
    visualize(['--format', 'dot', '-o', 'x.dot']);
    const dot = readFileSync(join(dir, 'x.dot'), 'utf8');
    expect(dot).toMatch(/^digraph "dag20" \{/);
    for (const [a, b, label] of EDGES) expect(dot).toContain(`"${a}" -> "${b}" [label="${label}"];`);
    expect(dot.match(/ -> /g)).toHaveLength(EDGES.length + 3);
    expect(dot).toContain('"start" -> "prepare";');
    expect(dot).toContain('"start" -> "server";');
    expect(dot).toContain('"final" -> "stop";');
    // replicas are grouped in a cluster named after the base task
    expect(dot).toContain('subgraph "cluster_worker"');
  });

  it('--format mermaid contains every edge', () => {
    visualize(['--format', 'mermaid', '-o', 'x.mmd']);
    const mmd = readFileSync(join(dir, 'x.mmd'), 'utf8');
    expect(mmd).toMatch(/^flowchart TD\n/);
    for (const [a, b, label] of EDGES) expect(mmd).toContain(`t_${a} -->|${label}| t_${b}`);
    expect(mmd).toContain('start --> t_prepare');
    expect(mmd).toContain('t_final --> stop');
  });

  it('without -o writes <output-dir>/<run id>/<workflow>.svg', () => {
    const out = join(dir, 'outputs');
    const r = visualize(['--output-dir', out]);
    const runs = readdirSync(out);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatch(/^(\d+-)?dag20-\d{8}-\d{6}-[0-9a-f]{6}$/);
    expect(readdirSync(join(out, runs[0]))).toEqual(['dag20.svg']);
    expect(r.stdout).toBe(`✓ Saved to ${join(out, runs[0], 'dag20.svg')}\n`);
    expect(readFileSync(join(out, runs[0], 'dag20.svg'), 'utf8')).toContain('>d_bottom</text>');
  });

  it('a recipe error exits 1 with a located error and writes nothing', () => {
    writeFileSync(
      join(dir, 'bad.yaml'),
      RECIPE.replace('depends_on: [d_left, d_right]', 'depends_on: [d_left, d_rihgt]'),
    );
    const line = RECIPE.split('\n').findIndex((l) => l.includes('[d_left, d_right]')) + 1;
    const r = sflow(['visualize', '-f', 'bad.yaml', '-o', 'bad.svg'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^✗ .*bad\\.yaml:${line}:\\d+: .*unknown task 'd_rihgt'`, 'm'));
    expect(r.stderr).toContain("did you mean 'd_right'?");
    expect(hasStackTrace(r.stderr)).toBe(false);
    expect(readdirSync(dir)).not.toContain('bad.svg');
  });
});
