/** The report's model and page, from hand-written ledgers (no files but a temp run dir). */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildModel } from '../../../src/report/model.js';
import { timelineSvg, concurrencySeries } from '../../../src/report/timeline-svg.js';
import { dagSvg } from '../../../src/report/dag-svg.js';
import { resultGroups } from '../../../src/report/tables.js';
import { renderReport } from '../../../src/report/page.js';
import { renderComparison } from '../../../src/report/compare.js';
import { MAX_POINTS, chartsFromTimelineCsv, monitorCharts } from '../../../src/report/monitor.js';
import { loadRun, parseLedger, readLedger, tailLines, writeRunReport } from '../../../src/report/load.js';
import { mixedRun } from './events.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'sflow-report-'));
  dirs.push(d);
  return d;
}
const count = (s: string, needle: string) => s.split(needle).length - 1;

describe('report model', () => {
  const m = buildModel(mixedRun());

  it('keeps every attempt with its outcome, times and exit code', () => {
    const flaky = m.tasks.find((t) => t.name === 'flaky')!;
    expect(flaky.attempts.map((a) => [a.n, a.outcome, a.exitCode])).toEqual([
      [1, 'RETRIED', 3],
      [2, 'COMPLETED', 0],
    ]);
    const server = m.tasks.find((t) => t.name === 'server')!;
    expect(server.status).toBe('READY');
    expect(server.attempts[0].ready).toBe(m.startedAt + 1000);
    expect(server.attempts[0].stopped?.why).toBe('teardown');
    expect(server.seenGpus).toBe('0,1');
    expect(m.tasks.find((t) => t.name === 'after')!.attempts).toEqual([]);
    expect(m.status).toBe('FAILED');
    expect(m.failFast).toMatch(/assertion/);
  });

  it('counts probe checks and the first pass', () => {
    expect(m.probes).toHaveLength(1);
    expect(m.probes[0]).toMatchObject({ task: 'server', total: 2, passed: 1, firstPass: m.startedAt + 1000 });
  });

  it('groups results by declared task with sweep and metric columns', () => {
    const g = resultGroups(m);
    expect(g.map((x) => x.base)).toEqual(['bench']);
    expect(g[0].sweepKeys).toEqual(['CONC', 'MODE']);
    expect(g[0].metricKeys).toEqual(['tput', 'unit_less']);
    expect(g[0].tasks.map((t) => t.name)).toEqual(['bench_1', 'bench_2']);
  });

  it('draws one timeline bar per attempt, a readiness marker and a retry mark', () => {
    const { svg, attempts } = timelineSvg(m);
    expect(attempts).toBe(5);
    expect(count(svg, '<rect class="bar ')).toBe(5);
    expect(count(svg, 'class="mk-ready"')).toBe(1);
    expect(count(svg, 'class="mk-retry"')).toBe(1);
    expect(svg).toContain('exit code 3');
  });

  it('draws the DAG with status colours, and the concurrency series', () => {
    const { html, nodes } = dagSvg(m);
    expect(nodes).toBe(5);
    expect(html).toContain('data-task="bench_1"><rect class="s-FAILED"');
    expect(count(html, 'class="edge')).toBe(4);
    expect(count(html, 'on-ready')).toBe(2);
    const c = concurrencySeries(m);
    expect(Math.max(...c.running)).toBe(3);
    expect(Math.max(...c.ready)).toBe(1);
  });

  it('renders a self-contained page: CSP, sections, escaping, failed assertion', () => {
    const html = renderReport({ model: m, tails: new Map([['bench_1', ['line <1>', 'last']]]) });
    expect(html).toContain("default-src 'none'");
    for (const id of ['failures', 'timeline', 'dag', 'results', 'probes', 'gpus', 'charts'])
      expect(html).toContain(`<section id="${id}">`);
    expect(html).not.toMatch(/<(link|img|iframe)\b|src="http|href="http/);
    expect(html).toContain('x&lt;y&gt;');
    expect(html).toContain('line &lt;1&gt;');
    expect(html).toContain('${{ result.tput &gt; 0 }}');
    expect(html).toContain('result.tput = 0');
    expect(html).toContain('uPlot');
    expect(count(html, '<tr data-task="bench_')).toBe(2);
    const gpus = html.slice(html.indexOf('<section id="gpus">'));
    expect(gpus).toContain(
      '<td class="name">server</td><td>local</td><td>localhost</td><td>0,1</td><td>0,1</td>',
    );
    const probes = html.slice(html.indexOf('<section id="probes">'));
    expect(probes).toContain('<td>1/2</td><td>+1.000s</td>');
  });

  it('a comparison page holds every run and every result row', () => {
    const a = { input: { model: m }, dir: '/r/a' };
    const b = { input: { model: buildModel(mixedRun()) }, dir: '/r/b' };
    const html = renderComparison([a, b], '/r/cmp.html');
    expect(count(html, '<rect class="bar ')).toBe(10);
    expect(count(html, '<tr data-task="bench_')).toBe(4);
    expect(html).toContain('href="a/report.html"');
  });
});

describe('report inputs', () => {
  it('skips a torn last line of the ledger', () => {
    const text =
      mixedRun()
        .map((e) => JSON.stringify(e))
        .join('\n') + '\n{"t":1,"type":"ta';
    const r = parseLedger(text);
    expect(r.skipped).toBe(1);
    expect(r.events).toHaveLength(mixedRun().length);
  });

  it('reads a ledger larger than one piece: a character split between pieces stays whole, a torn line is skipped', () => {
    const d = tmp();
    // the ledger is read 1 MiB at a time: the first line ends so that the 2-byte "·" of the
    // second line straddles byte 1,048,576
    const first = JSON.stringify({ t: 1, type: 'log', level: 'info', message: 'x' });
    const before = Buffer.byteLength(`${first}\n{"t":1,"type":"log","level":"info","message":"`);
    const message = `${'a'.repeat((1 << 20) - 1 - before)}·`;
    const lines = [first, JSON.stringify({ t: 1, type: 'log', level: 'info', message })];
    expect(Buffer.from(lines.join('\n')).indexOf('·')).toBe((1 << 20) - 1); // bytes 2^20 - 1 and 2^20
    for (let i = 0; i < 3000; i++)
      lines.push(JSON.stringify({ t: 2, type: 'log', level: 'info', message: `line ${i} ·` }));
    writeFileSync(join(d, 'events.jsonl'), lines.join('\n') + '\n{"t":3,"type":"lo');
    const events = readLedger(d) as Array<{ message?: string }>;
    expect(events).toHaveLength(3002);
    expect(events[1].message).toBe(message);
    expect(events[3001].message).toBe('line 2999 ·');
  });

  it('reads the last lines of a log, without ANSI colours', () => {
    const d = tmp();
    const f = join(d, 'x.log');
    writeFileSync(f, Array.from({ length: 100 }, (_, i) => `\u001b[31mline ${i}\u001b[0m`).join('\n') + '\n');
    expect(tailLines(f, 3)).toEqual(['line 97', 'line 98', 'line 99']);
    expect(tailLines(join(d, 'missing.log'))).toEqual([]);
  });

  it('writes report.html for a moved run directory, with the failed log found under it', () => {
    const d = tmp();
    writeFileSync(
      join(d, 'events.jsonl'),
      mixedRun()
        .map((e) => JSON.stringify(e))
        .join('\n') + '\n',
    );
    mkdirSync(join(d, 'bench_1'));
    writeFileSync(join(d, 'bench_1', 'bench_1.log'), 'tput: 0\nbye\n');
    const input = loadRun(d);
    expect(input.tails?.get('bench_1')).toEqual(['tput: 0', 'bye']);
    expect(input.monitor).toEqual([]);
    const path = writeRunReport(d);
    expect(readFileSync(path, 'utf8')).toContain('tput: 0');
    // written piece by piece: the same page as the one string renderReport returns
    expect(readFileSync(path, 'utf8')).toBe(renderReport(loadRun(d)));
  });

  it("monitorCharts: nothing without samples; per-GPU, CPU and network series from the monitor's timeline.csv", () => {
    const d = tmp();
    expect(monitorCharts(d)).toEqual([]);
    const head =
      'timestamp,timestamp_iso,node_id,hostname,resource_type,resource_id,metric_name,metric_value,metric_unit,metric_text,source_log';
    const rows = [
      '100.0,x,0,h,gpu,0,gpu_utilization_pct,10,%,,raw',
      '100.0,x,0,h,gpu,1,gpu_utilization_pct,20,%,,raw',
      '105.0,x,0,h,gpu,0,gpu_utilization_pct,30,%,,raw',
      '105.0,x,0,h,gpu,0,gpu_memory_used_mib,2048,MiB,,raw',
      '105.0,x,0,h,cpu,,cpu_utilization_pct,55.5,%,,raw',
      '105.0,x,0,h,gpu,0,gpu_temperature_c,70,C,,raw',
      '105.0,x,0,h,network,,rx_bytes_per_s,2000000,bytes/s,,raw',
      '105.0,x,0,h,network,,tx_bytes_per_s,1000000,bytes/s,,raw',
      '106.0,x,0,h,gpu,,gpu_error,,,"nvidia-smi failed: a, b",raw',
    ];
    const v = chartsFromTimelineCsv([head, ...rows].join('\n'));
    expect(v.charts.map((c) => c.title)).toEqual([
      'GPU utilisation',
      'GPU memory used',
      'CPU utilisation',
      'Network',
    ]);
    expect(v.charts[0].x).toEqual([100, 105]);
    expect(v.charts[0].series).toEqual([
      { label: 'GPU 0', values: [10, 30] },
      { label: 'GPU 1', values: [20, null] },
    ]);
    expect(v.charts[1]).toMatchObject({ unit: 'GiB', series: [{ label: 'GPU 0', values: [2] }] });
    expect(v.charts[3]).toMatchObject({
      unit: 'MB/s',
      series: [
        { label: 'received', values: [2] },
        { label: 'sent', values: [1] },
      ],
    });
    expect(v.errors).toEqual(['nvidia-smi failed: a, b']);
    expect(v.hosts).toEqual(['h']);
    // two hosts: labels name the host
    const two = chartsFromTimelineCsv([head, rows[0], rows[0].replace(',h,', ',h2,')].join('\n'));
    expect(two.charts[0].series.map((s) => s.label)).toEqual(['h · GPU 0', 'h2 · GPU 0']);
    // a long run: at most MAX_POINTS points, means over equal bins
    const many = [head];
    for (let i = 0; i < 5000; i++)
      many.push(`${1000 + i},x,0,h,cpu,,cpu_utilization_pct,${i % 2 ? 100 : 0},%,,raw`);
    const long = chartsFromTimelineCsv(many.join('\n')).charts[0];
    expect(long.x.length).toBe(MAX_POINTS);
    expect(long.series[0].values.every((x) => x !== null && x > 30 && x < 70)).toBe(true);
    // the workflow view of a run directory; without it, each monitored task's view
    mkdirSync(join(d, 'sflow_monitor', 'lifecycle', 'bench'), { recursive: true });
    writeFileSync(join(d, 'sflow_monitor', 'lifecycle', 'bench', 'timeline.csv'), [head, ...rows].join('\n'));
    expect(monitorCharts(d).map((x) => x.name)).toEqual(['bench']);
    mkdirSync(join(d, 'sflow_monitor', 'lifecycle', 'workflow'), { recursive: true });
    writeFileSync(
      join(d, 'sflow_monitor', 'lifecycle', 'workflow', 'timeline.csv'),
      [head, ...rows].join('\n'),
    );
    const views = monitorCharts(d);
    expect(views.map((x) => [x.name, x.file, x.charts.length])).toEqual([
      ['workflow', 'sflow_monitor/lifecycle/workflow/timeline.csv', 4],
    ]);
  });
});
