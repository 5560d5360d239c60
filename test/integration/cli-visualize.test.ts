/**
 * `sflow visualize` (spec cli.md §9.4) on a 20-task DAG written here: parallel and sequential
 * replicas, a readiness-probed service, a diamond. SVG and PNG are rendered in-process (no
 * system Graphviz), DOT and Mermaid carry the edges, the format follows -o's extension, the default
 * path is ./<workflow>.<ext> (no run folder).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { BIN, hasStackTrace, sflow } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-viz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
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

  it('without -o writes ./<workflow>.svg in the workspace dir and creates no run folder', () => {
    const out = join(dir, 'outputs');
    const r = visualize(['--output-dir', out]);
    expect(existsSync(out)).toBe(false);
    expect(r.stdout).toBe(`✓ Saved to ${join(dir, 'dag20.svg')}\n`);
    expect(readFileSync(join(dir, 'dag20.svg'), 'utf8')).toContain('>d_bottom</text>');
  });

  it('-o dag.png without --format writes a PNG (the format follows the extension)', () => {
    visualize(['-o', 'inferred.png']);
    const png = readFileSync(join(dir, 'inferred.png'));
    expect([...png.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    visualize(['-o', 'inferred.mmd']);
    expect(readFileSync(join(dir, 'inferred.mmd'), 'utf8')).toMatch(/^flowchart TD\n/);
  });

  it('--format mermaid without -o: the text on stdout, no file written', () => {
    const before = readdirSync(dir).sort();
    const r = visualize(['--format', 'mermaid']);
    expect(r.stdout).toMatch(/^flowchart TD\n/);
    for (const [a, b, label] of EDGES) expect(r.stdout).toContain(`t_${a} -->|${label}| t_${b}`);
    expect(r.stdout).not.toContain('Saved');
    expect(readdirSync(dir).sort()).toEqual(before);
  });

  it('-o - is stdout for every format: mermaid, dot, svg (the default) and the PNG bytes; no file named -', () => {
    const mmd = visualize(['--format', 'mermaid', '-o', '-']);
    expect(mmd.stdout).toMatch(/^flowchart TD\n/);
    expect(visualize(['--format', 'dot', '-o', '-']).stdout).toMatch(/^digraph "dag20" \{/);
    const svg = visualize(['-o', '-']).stdout;
    expect(svg).toMatch(/<svg[\s>]/);
    expect(wellFormedXml(svg)).toEqual([]);
    // the PNG's bytes, through a pipe (stdout is not a terminal here)
    const png = spawnSync(
      process.execPath,
      [BIN, 'visualize', '-f', 'dag.yaml', '--format', 'png', '-o', '-'],
      {
        cwd: dir,
        env: { ...process.env, NO_COLOR: '1' },
        timeout: 60_000,
      },
    );
    expect(png.status, String(png.stderr)).toBe(0);
    expect([...png.stdout.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(existsSync(join(dir, '-'))).toBe(false);
  });

  // `script` gives the command a terminal as stdout (util-linux; .ci installs it with the engines)
  it.skipIf(!existsSync('/usr/bin/script'))(
    '--format png -o - onto a terminal is refused (binary), exit 2, nothing written',
    () => {
      const cmd = [process.execPath, BIN, 'visualize', '-f', 'dag.yaml', '--format', 'png', '-o', '-']
        .map((a) => `'${a}'`)
        .join(' ');
      const r = spawnSync('/usr/bin/script', ['-qec', cmd, '/dev/null'], {
        cwd: dir,
        env: { ...process.env, NO_COLOR: '1' },
        encoding: 'latin1',
        timeout: 60_000,
      });
      expect(r.status).toBe(2);
      // (the terminal's output is read back as latin1: the message's text, without its ✗)
      expect(r.stdout).toContain('Usage error: PNG is binary: not written to a terminal');
      expect(r.stdout).not.toContain('PNG\r\n');
    },
  );

  it('a --format that contradicts the extension, or an unknown extension, is a usage error', () => {
    const a = sflow(['visualize', '-f', 'dag.yaml', '--format', 'svg', '-o', 'clash.png'], { cwd: dir });
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/^✗ Usage error: --format svg does not match the output file clash\.png/m);
    const b = sflow(['visualize', '-f', 'dag.yaml', '-o', 'dag.jpg'], { cwd: dir });
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('cannot tell the format of dag.jpg');
    expect(readdirSync(dir).filter((f) => /^(clash|dag)\.(png|jpg)$/.test(f))).toEqual([]);
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
