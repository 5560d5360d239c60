/** Report building from raw files (monitor.md §6–§10; §11 items 9, 13, 14). */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { MonitorSchedule, ReportView } from '../../../src/plan/monitor-schedule.js';
import { buildMonitorReports, type BuildInput } from '../../../src/monitor/reports.js';
import { clusterEvents, type TaskEvent } from '../../../src/monitor/markers.js';
import { estimateSkew } from '../../../src/monitor/skew.js';
import { seriesLabel } from '../../../src/monitor/svg.js';
import { TIMELINE_HEADER } from '../../../src/monitor/csv.js';
import { S, T0, util, writeRawRun } from '../../helpers/monitor-raw.js';
import { decodePng, inkPixels } from '../visualize/png-decode.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-mon-rep-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

function rawRun(hosts: string[], opts: { gpuError?: boolean; skewMs?: number } = {}): string {
  const runDir = join(root, `run${++n}`);
  writeRawRun(runDir, hosts, opts);
  return runDir;
}

function view(v: Partial<ReportView> & { path: string }): ReportView {
  return {
    group: 'lifecycle',
    note: 'test',
    windowTask: null,
    window: null,
    targets: [{ host: 'localhost', gpus: 'all' }],
    scopes: ['gpu', 'cpu', 'memory'],
    formats: ['csv', 'svg'],
    ...v,
  };
}

function input(
  runDir: string,
  views: ReportView[],
  extra: Partial<BuildInput> = {},
  hosts = ['h1'],
): BuildInput {
  const schedule: MonitorSchedule = { monitors: [], collectors: [], views, warnings: [] };
  return {
    runDir,
    workflow: 'wf',
    runId: 'wf-1',
    schedule,
    collectors: hosts.map((h, i) => ({
      host: i === 0 ? 'localhost' : h,
      name: h,
      nodeId: String(i),
      start: T0 - 200,
      stop: T0 + (S - 1) * 1000 + 300,
      intervalMs: 1000,
    })),
    runStart: T0,
    runEnd: T0 + (S - 1) * 1000,
    events: [],
    taskSpans: new Map([['task', { start: T0 + 10_000, end: T0 + 40_000 }]]),
    markerLines: () => ({ lines: [], searched: 0 }),
    rasterize: null,
    ...extra,
  };
}

const labels = (svg: string) =>
  [...svg.matchAll(/class="series-label" data-series="([^"]+)"[^>]*>([^<]+)</g)].map((m) => [m[1], m[2]]);

describe('charts', () => {
  it('draws one line per GPU, each labelled with its own avg and max', async () => {
    const run = rawRun(['h1']);
    await buildMonitorReports(input(run, [view({ path: 'lifecycle/workflow/' })]));
    const svg = readFileSync(join(run, 'sflow_monitor/lifecycle/workflow/timeline.svg'), 'utf8');
    const util0 = labels(svg)
      .filter(([k]) => k.startsWith('gpu-'))
      .slice(0, 4);
    expect(util0.map(([k]) => k)).toEqual(['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3']);
    for (const [k, text] of util0) {
      const g = Number(k.slice(4));
      const vals = Array.from({ length: S }, (_, i) => util(g, i));
      const avg = vals.reduce((a, b) => a + b, 0) / S;
      expect(text.replace(/&#?\w+;/g, '')).toBe(seriesLabel(`GPU ${g}`, avg, Math.max(...vals), '%'));
    }
    expect([...svg.matchAll(/<polyline class="series" data-series="gpu-/g)].length).toBe(12); // util, mem, power
    // node-level scopes: one averaged line each
    expect(labels(svg).filter(([k]) => k === 'cpu_utilization_pct')).toHaveLength(1);
    // GPU memory shown in GiB
    expect(svg).toContain('GPU memory used (GiB)');
  });

  it('a task report keeps its planned GPUs; an unknown subset falls back to all; none drops GPU data', async () => {
    const run = rawRun(['h1']);
    await buildMonitorReports(
      input(run, [
        view({ path: 'lifecycle/a/', targets: [{ host: 'localhost', gpus: [1, 2] }] }),
        view({ path: 'lifecycle/b/', targets: [{ host: 'localhost', gpus: [7] }] }),
        view({ path: 'lifecycle/c/', targets: [{ host: 'localhost', gpus: 'none' }] }),
      ]),
    );
    const read = (p: string) => readFileSync(join(run, 'sflow_monitor/lifecycle', p, 'timeline.svg'), 'utf8');
    const gpuLines = (svg: string) => [
      ...new Set(
        labels(svg)
          .map(([k]) => k)
          .filter((k) => k.startsWith('gpu-')),
      ),
    ];
    expect(gpuLines(read('a'))).toEqual(['gpu-1', 'gpu-2']);
    expect(gpuLines(read('b'))).toEqual(['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3']);
    expect(gpuLines(read('c'))).toEqual([]);
    expect(readFileSync(join(run, 'sflow_monitor/lifecycle/c/summary.csv'), 'utf8')).not.toContain('gpu,');
  });

  it('§11.13 a multi-node report draws timeline.<host>.svg per node and one timeline.csv', async () => {
    const run = rawRun(['h1', 'h2']);
    const v = view({
      path: 'lifecycle/multi/',
      targets: [
        { host: 'localhost', gpus: 'all' },
        { host: 'h2', gpus: 'all' },
      ],
    });
    await buildMonitorReports(input(run, [v], {}, ['h1', 'h2']));
    const dir = join(run, 'sflow_monitor/lifecycle/multi');
    expect(readdirSync(dir).sort()).toEqual([
      'summary.csv',
      'timeline.csv',
      'timeline.h1.svg',
      'timeline.h2.svg',
    ]);
    const csv = readFileSync(join(dir, 'timeline.csv'), 'utf8').split('\n');
    expect(csv[0]).toBe(TIMELINE_HEADER);
    expect(new Set(csv.slice(1, -1).map((l) => l.split(',')[3]))).toEqual(new Set(['h1', 'h2']));
  });

  it('sflow_monitor.log lists only the files written, and says which were not and why', async () => {
    const run = rawRun(['h1']);
    const v = [
      view({ path: 'lifecycle/workflow/', formats: ['csv', 'svg', 'png'] }),
      // a task window between two samples (1 s apart): nothing to draw
      view({ path: 'lifecycle/task/', windowTask: 'task', formats: ['csv', 'svg'] }),
    ];
    const spans = new Map([['task', { start: T0 + 10_100, end: T0 + 10_400 }]]);
    const r = await buildMonitorReports(input(run, v, { rasterize: null, taskSpans: spans }));
    const log = readFileSync(join(run, 'sflow_monitor.log'), 'utf8');
    const listed = log.slice(log.indexOf('Reports (under sflow_monitor/)')).split('\n').slice(1, 3);
    expect(listed).toEqual([
      '  lifecycle/workflow/ (timeline.csv, summary.csv, timeline.svg; not written: timeline.png (no PNG rasteriser: @resvg/resvg-js could not be loaded))',
      '  lifecycle/task/ (timeline.csv, summary.csv; not written: timeline.svg (no samples in the window))',
    ]);
    expect(r.reports).toEqual(listed.map((l) => l.trim()));
    // each name listed as written is a file; none listed as not written is
    for (const [dir, files] of [
      ['workflow', ['summary.csv', 'timeline.csv', 'timeline.svg']],
      ['task', ['summary.csv', 'timeline.csv']],
    ] as const)
      expect(readdirSync(join(run, 'sflow_monitor/lifecycle', dir)).sort()).toEqual(files);
  });

  it('§11.14 PNG without a renderer: one hint, CSV and SVG still written; with resvg a PNG', async () => {
    const run = rawRun(['h1']);
    const v = [
      view({ path: 'lifecycle/a/', formats: ['csv', 'svg', 'png'] }),
      view({ path: 'lifecycle/b/', formats: ['png'] }),
    ];
    const r = await buildMonitorReports(input(run, v, { rasterize: null }));
    expect(r.warnings.filter((w) => w.includes('PNG charts skipped'))).toHaveLength(1);
    expect(readdirSync(join(run, 'sflow_monitor/lifecycle/a')).sort()).toEqual([
      'summary.csv',
      'timeline.csv',
      'timeline.svg',
    ]);
    expect(readFileSync(join(run, 'sflow_monitor.log'), 'utf8')).toContain('PNG charts skipped');
    const run2 = rawRun(['h1']);
    const both = view({ path: 'lifecycle/c/', formats: ['svg', 'png'] });
    await buildMonitorReports(input(run2, [v[1], both], { rasterize: undefined }));
    const png = readFileSync(join(run2, 'sflow_monitor/lifecycle/b/timeline.png'));
    expect(png.subarray(1, 4).toString()).toBe('PNG');

    // what the PNG shows: the SVG's chart at the renderer's 1.5× zoom, drawn, in the series' colours
    const svg = readFileSync(join(run2, 'sflow_monitor/lifecycle/c/timeline.svg'), 'utf8');
    const img = decodePng(readFileSync(join(run2, 'sflow_monitor/lifecycle/c/timeline.png')));
    const size = /^<svg [^>]*width="(\d+)" height="(\d+)"/.exec(svg);
    expect(size).not.toBeNull();
    expect([img.width, img.height]).toEqual([
      Math.round(Number(size![1]) * 1.5),
      Math.round(Number(size![2]) * 1.5),
    ]);
    const colours = new Set<number>();
    for (let p = 0; p < img.rgba.length; p += 4) colours.add(img.rgba.readUInt32BE(p));
    expect(colours.size).toBeGreaterThan(50); // not blank, not one flat fill
    expect(inkPixels(img)).toBeGreaterThan(img.width * 2); // axes, lines and labels
    const panel = /<rect x="(\d+)" y="\d+" width="(\d+)" height="\d+" fill="#fafafa"/.exec(svg);
    expect(panel).not.toBeNull();
    const plotX0 = Number(panel![1]) * 1.5 + 2; // clear of the panel's border
    const plotX1 = (Number(panel![1]) + Number(panel![2])) * 1.5 - 2;
    const strokes = [
      ...new Set(
        [...svg.matchAll(/<polyline class="series"[^>]* stroke="#([0-9a-f]{6})"/g)].map((m) => m[1]),
      ),
    ];
    expect(strokes.length).toBeGreaterThan(1);
    for (const hex of strokes) {
      const [r, g, b] = [0, 2, 4].map((k) => parseInt(hex.slice(k, k + 2), 16));
      let hits = 0;
      // inside the plot panels only: the legend's colour swatches must not count as lines
      for (let p = 0; p < img.rgba.length; p += 4) {
        const x = (p / 4) % img.width;
        if (x < plotX0 || x > plotX1) continue;
        const d = Math.abs(img.rgba[p] - r) + Math.abs(img.rgba[p + 1] - g) + Math.abs(img.rgba[p + 2] - b);
        if (d <= 24) hits++;
      }
      expect(hits, `pixels in the colour of series #${hex}`).toBeGreaterThan(20);
    }
  }, 60_000);
});

describe('§11.9 windows', () => {
  const window = {
    start: { patterns: ['BENCH START'], select: 'first' as const },
    end: { patterns: ['re:done in \\d+'], select: 'last' as const },
  };
  const lines = [
    { t: T0 + 15_000, lineNo: 3, text: 'BENCH START' },
    { t: T0 + 25_000, lineNo: 9, text: 'done in 10 s' },
  ];
  it('found: windowed/<task>/ starts at or after the start marker and ends by the end marker', async () => {
    const run = rawRun(['h1']);
    const v = view({ path: 'windowed/task/', group: 'windowed', windowTask: 'task', window });
    await buildMonitorReports(input(run, [v], { markerLines: () => ({ lines, searched: 12 }) }));
    const dir = join(run, 'sflow_monitor/windowed/task');
    const rows = readFileSync(join(dir, 'timeline.csv'), 'utf8').trim().split('\n').slice(1);
    const times = rows.map((r) => Number(r.split(',')[0]) * 1000);
    expect(Math.min(...times)).toBeGreaterThanOrEqual(T0 + 15_000);
    expect(Math.max(...times)).toBeLessThanOrEqual(T0 + 25_000);
    // samples 15..25: five at 5 %, six of the spike (20..29) at 95 %
    const cpu = readFileSync(join(dir, 'summary.csv'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('cpu,cpu_utilization_pct'));
    expect(cpu).toBe('cpu,cpu_utilization_pct,%,11,5,54.091,95');
    const w = JSON.parse(readFileSync(join(dir, 'window.json'), 'utf8'));
    expect(w).toMatchObject({ status: 'resolved', start: { lineNo: 3, matches: 1 }, end: { lineNo: 9 } });
  });

  it('missed: a warning, no windowed report, window_not_found.json naming the pattern', async () => {
    const run = rawRun(['h1']);
    const v = view({ path: 'windowed/task/', group: 'windowed', windowTask: 'task', window });
    const r = await buildMonitorReports(
      input(run, [v], { markerLines: () => ({ lines: [lines[1]], searched: 40 }) }),
    );
    expect(r.warnings.join('\n')).toMatch(
      /windowed report windowed\/task\/ skipped: the start marker 'BENCH START' never matched/,
    );
    const dir = join(run, 'sflow_monitor/windowed/task');
    expect(readdirSync(dir)).toEqual(['window_not_found.json']);
    expect(JSON.parse(readFileSync(join(dir, 'window_not_found.json'), 'utf8'))).toMatchObject({
      status: 'unresolved',
      missed: 'start',
      patterns: ['BENCH START'],
      searchedLines: 40,
    });
    expect(r.reports).toEqual([]);
  });

  it('end is chosen only among lines after the selected start', async () => {
    const { resolveWindow } = await import('../../../src/monitor/window.js');
    const ls = [
      { t: 1, lineNo: 1, text: 'warmup done' },
      { t: 2, lineNo: 2, text: 'start' },
      { t: 3, lineNo: 3, text: 'start' },
      { t: 4, lineNo: 4, text: 'run done' },
      { t: 5, lineNo: 5, text: 'run done' },
    ];
    const w = (s: 'first' | 'last', e: 'first' | 'last') => ({
      start: { patterns: ['start'], select: s },
      end: { patterns: ['done'], select: e },
    });
    expect(resolveWindow(ls, w('last', 'first'), 0, 9)).toMatchObject({ t0: 3, t1: 4 });
    expect(resolveWindow(ls, w('first', 'last'), 0, 9)).toMatchObject({ t0: 2, t1: 5 });
    expect(resolveWindow(ls.slice(0, 3), w('first', 'last'), 0, 9)).toMatchObject({
      status: 'unresolved',
      missed: 'end',
    });
    expect(
      resolveWindow(ls, { start: null, end: { patterns: ['re:^warmup'], select: 'last' } }, 0, 9),
    ).toMatchObject({ t0: 0, t1: 1 });
  });
});

describe('events, errors, skew', () => {
  it('merges near-simultaneous events into one labelled rule; dotted = start, solid = end', async () => {
    const ev = (t: number, task: string, kind: TaskEvent['kind']): TaskEvent => ({ t: T0 + t, task, kind });
    const events = [
      ev(1000, 'a', 'submit'),
      ev(1100, 'b', 'submit'),
      ev(1200, 'c', 'submit'),
      ev(1250, 'a', 'ready'),
      ev(1300, 'b', 'ready'),
      ev(40_000, 'a', 'done'),
    ];
    const cl = clusterEvents(events, T0, T0 + 59_000, 885);
    expect(cl.map((c) => [c.label, c.style])).toEqual([
      ['3 tasks submit +2 more', 'start'],
      ['a done', 'end'],
    ]);
    const run = rawRun(['h1']);
    await buildMonitorReports(input(run, [view({ path: 'lifecycle/workflow/' })], { events }));
    const svg = readFileSync(join(run, 'sflow_monitor/lifecycle/workflow/timeline.svg'), 'utf8');
    expect(svg).toMatch(
      /<g class="event start">.*\n<line [^>]*stroke-dasharray="2,3"\/>\n<text class="event-label"[^>]*>3 tasks submit \+2 more</,
    );
    expect(svg).toMatch(
      /<g class="event end">.*\n<line (?![^>]*dasharray)[^>]*\/>\n<text class="event-label"[^>]*>a done</,
    );
    const log = readFileSync(join(run, 'sflow_monitor.log'), 'utf8');
    expect(log).toMatch(/Task Events\n {2}\+1\.000s \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} submit a\n/);
  });

  it('sflow_monitor.log has its sections in order and de-duplicated GPU errors', async () => {
    const run = rawRun(['h1'], { gpuError: true });
    await buildMonitorReports(input(run, [view({ path: 'lifecycle/workflow/' })]));
    const log = readFileSync(join(run, 'sflow_monitor.log'), 'utf8');
    const order = [
      'Workflow :',
      'Metrics (whole run',
      'Timelines',
      'Windows',
      'GPU Collection Errors',
      'Reports',
      'Task Events',
    ];
    const at = order.map((s) => log.indexOf(s));
    expect(at.every((x) => x >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(log).toMatch(/GPU Collection Errors\n {2}h1: nvidia-smi not found \(×6, /);
    expect(log).toMatch(/GPU util % +[▁▂▃▄▅▆▇█]{60}/);
    const csv = readFileSync(join(run, 'sflow_monitor/lifecycle/workflow/timeline.csv'), 'utf8');
    expect(csv).toMatch(/,gpu,,gpu_error,,,nvidia-smi not found,gpu_monitor_node_0_h1\.log\n/);
  });

  it('a skewed node clock is corrected for reporting only, with a warning; a healthy one is not', async () => {
    expect(estimateSkew({ start: 0, stop: 60_000 }, { first: 300, last: 59_500 }, 1000).shift).toBe(0);
    const e = estimateSkew({ start: 0, stop: 60_000 }, { first: 30_300, last: 89_500 }, 1000);
    expect(e.shift).toBeLessThan(-28_000);
    expect(e.shift).toBeGreaterThan(-31_000);
    const run = rawRun(['h1'], { skewMs: 30_000 });
    const r = await buildMonitorReports(input(run, [view({ path: 'lifecycle/workflow/' })]));
    expect(r.warnings.join('\n')).toMatch(
      /clock on 'h1' is ahead of this host by 2\d\.\d\.\.3\d\.\ds; monitor samples were shifted by -\d+\.\ds for REPORTING only/,
    );
    const rows = readFileSync(join(run, 'sflow_monitor/lifecycle/workflow/timeline.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1);
    expect(Math.min(...rows.map((l) => Number(l.split(',')[0]) * 1000))).toBeLessThan(T0 + 2000);
    expect(readFileSync(join(run, 'sflow_monitor/raw/cpu_monitor_node_0_h1.log'), 'utf8').split(',')[0]).toBe(
      ((T0 + 30_000) / 1000).toFixed(3),
    );
  });

  it('no raw data at all still writes sflow_monitor.log', async () => {
    const runDir = join(root, 'empty');
    mkdirSync(runDir, { recursive: true });
    await buildMonitorReports(input(runDir, []));
    expect(existsSync(join(runDir, 'sflow_monitor.log'))).toBe(true);
  });
});

describe('--resume', () => {
  const tv = () => view({ path: 'lifecycle/tasks/prep/', windowTask: 'prep' });

  it("a reused task's report is named as in the earlier session, not warned about", async () => {
    const run = rawRun(['h1']);
    const r = await buildMonitorReports(input(run, [tv()], { reused: new Set(['prep']) }));
    expect(r.warnings.filter((w) => w.includes('prep'))).toEqual([]);
    expect(r.reports).toEqual([]);
    expect(existsSync(join(run, 'sflow_monitor/lifecycle/tasks/prep'))).toBe(false);
    expect(readFileSync(join(run, 'sflow_monitor.log'), 'utf8')).toContain(
      'lifecycle/tasks/prep/: not in this session (task reused from an earlier session)',
    );
  });

  it('a task that never ran and was not reused is still a warning', async () => {
    const run = rawRun(['h1']);
    const r = await buildMonitorReports(input(run, [tv()], { reused: new Set(['other']) }));
    expect(r.warnings).toContain("report lifecycle/tasks/prep/ skipped: task 'prep' never ran");
    expect(readFileSync(join(run, 'sflow_monitor.log'), 'utf8')).not.toContain('not in this session');
  });
});
