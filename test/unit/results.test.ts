/**
 * The pieces of `sflow results` that need no engine: the zip reader (against archives yazl
 * writes, as upload_all does), median/MAD and the regression rule, the Pareto front, metric
 * directions, and the compare page's links.
 */
import { createWriteStream } from 'node:fs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { zipEntries, zipEntryData } from '../../src/results/zip-read.js';
import { mad, median, parseMetric, groupConfigs, varsByTask } from '../../src/results/configs.js';
import { diffRows } from '../../src/results/diff.js';
import { compareRows } from '../../src/results/compare.js';
import { renderComparePage } from '../../src/results/compare-page.js';
import type { Row } from '../../src/results/row.js';
import { scratchDir } from '../helpers/scratch.js';

async function zipOf(files: Record<string, string>, compress: boolean): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, text] of Object.entries(files)) z.addBuffer(Buffer.from(text), name, { compress });
  const path = join(scratchDir('sflow-zip-'), 'a.zip');
  const out = createWriteStream(path);
  z.outputStream.pipe(out);
  z.end();
  await once(out, 'close');
  return readFileSync(path);
}

describe('zip reader', () => {
  it('reads deflated and stored entries yazl wrote, by name', async () => {
    const files = { 'events.jsonl': '{"a":1}\n'.repeat(500), 'sub/x.txt': 'héllo' };
    for (const compress of [true, false]) {
      const buf = await zipOf(files, compress);
      const entries = zipEntries(buf);
      expect([...entries.keys()].sort()).toEqual(['events.jsonl', 'sub/x.txt']);
      for (const [name, text] of Object.entries(files))
        expect(zipEntryData(buf, entries.get(name)!).toString('utf8')).toBe(text);
    }
  });

  it('refuses what is not a zip', () => {
    expect(() => zipEntries(Buffer.from('not a zip at all, just text'))).toThrow(/not a zip archive/);
  });
});

describe('statistics', () => {
  it('median and scaled MAD', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(mad([1, 2, 3, 4, 100])).toBeCloseTo(1.4826, 4);
    expect(mad([5])).toBe(0);
  });

  const row = (run: string, cfg: number, v: number): Row => ({
    run_dir: run,
    workflow: 'w',
    base_task: 't',
    status: 'COMPLETED',
    var_X: cfg,
    result_tput: v,
    result_lat_ms: 100,
  });

  it('a change counts only beyond k × noise and the minimum size, in the bad direction', () => {
    const base = [100, 101, 99, 100.5, 99.5].map((v, i) => row(`b${i}`, 1, v));
    const cols = Object.keys(base[0]);
    const tput = parseMetric('tput:max', cols);
    const worse = [90, 91, 89, 90.5, 89.5].map((v, i) => row(`c${i}`, 1, v));
    const d = diffRows(base, worse, [tput]);
    expect(d.lines.map((l) => l.verdict)).toEqual(['regression']);
    expect(d.lines[0].base.run).toBe('b0');
    expect(d.regressions).toBe(1);
    // the same drop where lower is better is an improvement
    expect(diffRows(base, worse, [parseMetric('tput:min', cols)]).lines[0].verdict).toBe('improvement');
    // 3 %: under the 5 % minimum
    const small = [97, 98, 96, 97.5, 96.5].map((v, i) => row(`c${i}`, 1, v));
    expect(diffRows(base, small, [tput]).lines[0].verdict).toBe('unchanged');
    // 10 % inside a very noisy base: under k × noise
    const noisy = [60, 140, 100, 80, 120].map((v, i) => row(`b${i}`, 1, v));
    expect(diffRows(noisy, worse, [tput]).lines[0].verdict).toBe('unchanged');
  });

  it('configurations differ only by the variables that differ within a task', () => {
    const rows: Row[] = [
      { workflow: 'w', base_task: 'a', var_X: 1, var_Y: 5 },
      { workflow: 'w', base_task: 'a', var_X: 2, var_Y: 5 },
      { workflow: 'w', base_task: 'b', var_X: 1, var_Y: 5 },
    ];
    expect(groupConfigs(rows, varsByTask(rows)).map((c) => c.label)).toEqual(['w/a X=1', 'w/a X=2', 'w/b']);
  });

  it('metric directions: given, or guessed from the name', () => {
    const cols = ['result_output_throughput', 'result_ttft_ms', 'result_throughput_tok_s', 'duration_s'];
    expect(parseMetric('output_throughput', cols)).toMatchObject({ direction: 'max', guessed: true });
    expect(parseMetric('ttft_ms', cols)).toMatchObject({ direction: 'min', guessed: true });
    expect(parseMetric('throughput_tok_s', cols)).toMatchObject({ direction: 'max' });
    expect(parseMetric('duration_s', cols)).toMatchObject({ column: 'duration_s', direction: 'min' });
    expect(parseMetric('ttft_ms:max', cols)).toMatchObject({ direction: 'max', guessed: false });
    expect(() => parseMetric('nope', cols)).toThrow(/no metric 'nope'/);
  });
});

describe('compare', () => {
  const pt = (x: number, t: number, l: number): Row => ({
    run_dir: `/runs/r${x}`,
    workflow: 'w',
    base_task: 'b',
    status: 'COMPLETED',
    var_X: x,
    result_tput: t,
    result_lat_ms: l,
  });
  const rows = [pt(1, 100, 10), pt(2, 200, 20), pt(3, 150, 30), pt(4, 300, 40), pt(5, 250, 15)];
  const ms = [parseMetric('tput:max', Object.keys(rows[0])), parseMetric('lat_ms:min', Object.keys(rows[0]))];

  it('best by the first metric; the Pareto front is what nothing beats on both', () => {
    const r = compareRows(rows, ms);
    expect(r.best?.config).toBe('w/b X=4');
    // (200,20) is beaten by (250,15); (150,30) by (250,15)
    expect(r.front.map((p) => p.config)).toEqual(['w/b X=1', 'w/b X=5', 'w/b X=4']);
  });

  it('the page links each point to its run report, relative to the page, values escaped', () => {
    const evil = [...rows, { ...pt(6, 50, 50), workflow: 'w<script>' }];
    const html = renderComparePage(compareRows(evil, ms), '/runs/pages/compare.html');
    expect(html).toContain('<a href="../r4/report.html" data-config="w/b X=4">');
    expect(html).toContain('w&lt;script&gt;/b');
    expect(html).not.toContain('w<script>');
    expect(html).toContain("default-src 'none'");
    expect(html.match(/<polyline class="front" points="([^"]+)"/)?.[1].split(' ')).toHaveLength(3);
  });
});
