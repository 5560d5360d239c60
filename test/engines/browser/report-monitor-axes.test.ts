/**
 * The report's hardware-monitor charts in headless Chromium, read from the uPlot instance each
 * chart keeps (`el.uplot`): their x axis is seconds from the run's start, like the timeline (not
 * wall-clock time), and covers the run's span; a series of one sample is drawn within that span
 * (not on an axis of years around the sample).
 *
 *   npm run test:browser
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { sflow } from '../../helpers/cli.js';
import { onlyRunDir } from '../../helpers/run-dir.js';
import { MONITORED, MONITOR_ENV } from '../../helpers/monitored-run.js';
import { scratchDir } from '../../helpers/scratch.js';
import { launchChromium, noBrowserReason } from './chromium.js';

const noBrowser = noBrowserReason();
let browser: Browser | undefined;
let runDir: string;

interface Axis {
  title: string;
  time: boolean;
  min: number;
  max: number;
  xs: number[];
}

/** The run's span in seconds, from its ledger. */
function spanS(dir: string): number {
  const events = readFileSync(join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; t: number });
  const start = events.find((e) => e.type === 'run_started')!.t;
  const end = [...events].reverse().find((e) => e.type === 'run_finished')!.t;
  return (end - start) / 1000;
}

async function axes(reportFile: string): Promise<Axis[]> {
  const context = await browser!.newContext({ offline: true, viewport: { width: 1400, height: 1000 } });
  try {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(pathToFileURL(reportFile).href, { waitUntil: 'load' });
    await page.waitForSelector('.chart.monitor canvas', { timeout: 30_000 });
    const out = await page.evaluate<
      Axis[]
    >(`Array.from(document.querySelectorAll('.chart.monitor')).map(function (el) {
      var u = el.uplot;
      return { title: el.getAttribute('data-title'), time: !!u.scales.x.time, min: u.scales.x.min, max: u.scales.x.max, xs: Array.from(u.data[0]) };
    })`);
    expect(errors).toEqual([]);
    return out;
  } finally {
    await context.close();
  }
}

beforeAll(async () => {
  if (noBrowser) return;
  const dir = scratchDir('sflow-report-axes-');
  writeFileSync(join(dir, 'r.yaml'), MONITORED);
  const r = sflow(['run', '-f', 'r.yaml'], { cwd: dir, env: MONITOR_ENV, timeoutMs: 120_000 });
  if (r.code !== 0) throw new Error(`monitored run failed: ${r.stderr}`);
  runDir = onlyRunDir(join(dir, 'sflow_output'));
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
});

describe.skipIf(noBrowser)('report: hardware-monitor chart axes', () => {
  it('x is seconds from the run start and covers the run span, like the timeline', async () => {
    const span = spanS(runDir);
    const all = await axes(join(runDir, 'report.html'));
    expect(all.map((a) => a.title)).toContain('Memory used');
    for (const a of all) {
      expect(a.time, a.title).toBe(false);
      expect(a.min, a.title).toBeLessThanOrEqual(0);
      expect(a.min, a.title).toBeGreaterThan(-1);
      expect(a.max, a.title).toBeGreaterThanOrEqual(span - 0.01);
      expect(a.max, a.title).toBeLessThan(span + 1);
      for (const x of a.xs) expect(x).toBeGreaterThanOrEqual(-1);
    }
  });

  it('a series of one sample is drawn within the run span', async () => {
    // the same run, its monitor timeline cut down to the first sample time only
    const csv = join(runDir, 'sflow_monitor', 'lifecycle', 'workflow', 'timeline.csv');
    const lines = readFileSync(csv, 'utf8').split('\n').filter(Boolean);
    const first = lines[1].split(',')[0];
    writeFileSync(
      csv,
      [lines[0], ...lines.slice(1).filter((l) => l.split(',')[0] === first)].join('\n') + '\n',
    );
    const out = join(runDir, 'one-sample.html');
    const r = sflow(['report', runDir, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    const span = spanS(runDir);
    const memory = (await axes(out)).find((a) => a.title === 'Memory used')!;
    expect(memory.xs).toHaveLength(1);
    expect(memory.time).toBe(false);
    expect(memory.min).toBeLessThanOrEqual(Math.min(0, memory.xs[0]));
    expect(memory.max).toBeGreaterThanOrEqual(Math.max(span - 0.01, memory.xs[0]));
    expect(memory.max - memory.min).toBeLessThan(span + 2);
  });
});
