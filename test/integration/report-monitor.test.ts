/**
 * report.html renders the hardware monitor's real output: a monitored local run (the fake
 * nvidia-smi of assets/test-bin on PATH, two GPUs) gets a "Hardware monitor" section whose charts
 * carry exactly the samples of sflow_monitor/lifecycle/workflow/timeline.csv — per GPU, CPU,
 * memory, network — with the run's task events as markers.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sflow } from '../helpers/cli.js';
import { MONITORED, MONITOR_ENV } from '../helpers/monitored-run.js';
import { onlyRunDir } from '../helpers/run-dir.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-report-mon-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Chart {
  id: string;
  title: string;
  unit: string;
  x: number[];
  series: Array<{ label: string; values: Array<number | null> }>;
  markers?: Array<[number, string, string]>;
}

describe('report.html of a monitored run', () => {
  it('charts the monitor timeline per GPU, CPU, memory and network, with task events as markers', () => {
    const f = join(root, 'r.yaml');
    writeFileSync(f, MONITORED);
    const r = sflow(['run', '-f', f], { cwd: root, env: MONITOR_ENV, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const runDir = onlyRunDir(join(root, 'sflow_output'));
    const html = readFileSync(join(runDir, 'report.html'), 'utf8');
    expect(html).toContain('<section id="monitor"><h2>Hardware monitor</h2>');
    expect(html).toContain('<code>sflow_monitor/lifecycle/workflow/timeline.csv</code>');
    const data = /<script type="application\/json" id="chart-data">(.*?)<\/script>/s.exec(html)![1];
    const charts = (JSON.parse(data) as Chart[]).filter((c) => c.id.startsWith('chart-monitor-'));
    expect(charts.map((c) => c.title)).toEqual([
      'GPU utilisation',
      'GPU memory used',
      'CPU utilisation',
      'Memory used',
      'Network',
    ]);
    expect(charts[0].series.map((s) => s.label)).toEqual(['GPU 0', 'GPU 1']);
    expect(charts[4].series.map((s) => s.label)).toEqual(['received', 'sent']);

    // every GPU utilisation sample of the monitor's CSV is on the chart, at its time in seconds
    // from the run's start (like the timeline)
    const t0 =
      (
        JSON.parse(readFileSync(join(runDir, 'events.jsonl'), 'utf8').split('\n')[0]) as {
          type: string;
          t: number;
        }
      ).t / 1000;
    const csv = readFileSync(join(runDir, 'sflow_monitor/lifecycle/workflow/timeline.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','))
      .filter((c) => c[6] === 'gpu_utilization_pct');
    expect(csv.length).toBeGreaterThanOrEqual(4);
    for (const c of csv) {
      const i = charts[0].x.indexOf(Math.round((Number(c[0]) - t0) * 1000) / 1000);
      expect(i, `sample at ${c[0]}`).toBeGreaterThanOrEqual(0);
      expect(charts[0].series[Number(c[5])].values[i]).toBe(Number(c[7]));
    }
    // task events over every chart: load starts and finishes, after finishes
    const labels = charts[0].markers!.map((m) => m[2]);
    // (after's start follows load's end at once: usually one marker, "load done +1 more")
    expect(labels[0]).toBe('load start');
    expect(labels.some((l) => /^load done( \+1 more)?$/.test(l))).toBe(true);
    expect(labels[labels.length - 1]).toBe('after done');
    expect(charts[0].markers![0][1]).toBe('start');
    for (const c of charts) expect(c.markers).toEqual(charts[0].markers);
    // the axis covers the run from its start
    for (const c of charts) expect((c as Chart & { range: [number, number] }).range[0]).toBe(0);
    expect(charts[0].markers![0][0]).toBeGreaterThanOrEqual(0);
    expect(charts[0].markers![0][0]).toBeLessThan(60);
  }, 120_000);
});
