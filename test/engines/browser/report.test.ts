/**
 * report.html in a real browser: Debian's headless Chromium (/usr/bin/chromium) driven by
 * playwright-core through `executablePath` (no browser download). Each report is opened from
 * disk with the network blocked; no request may leave the page, no console error may appear,
 * the timeline holds one bar per task attempt and the results table the sweep's rows.
 * Screenshots (whole page, and the first screen as `*-top.png`) are kept in
 * test-artifacts/browser/ (git-ignored) for a human to look at.
 *
 *   npm run test:browser
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { REPO, sflow } from '../../helpers/cli.js';
import { onlyRunDir } from '../../helpers/run-dir.js';
import { resumedSweep } from '../../helpers/resume-runs.js';
import { MONITORED, MONITOR_ENV } from '../../helpers/monitored-run.js';
import {
  EXAMPLES,
  freePorts,
  manyTasksRecipe,
  recipeFile,
  runRecipe,
  sharedSkipReason,
} from '../../helpers/report-runs.js';
import { launchChromium, noBrowserReason } from './chromium.js';

const ARTIFACTS = join(REPO, 'test-artifacts', 'browser');
const noBrowser = noBrowserReason();
const noShared = sharedSkipReason();
const cleanup: string[] = [];
let browser: Browser | undefined;

beforeAll(async () => {
  if (noBrowser) return;
  browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  cleanup.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

interface Seen {
  outside: string[];
  errors: string[];
  bars: number;
  attemptsNote: string;
  resultRows: (base: string) => Promise<number>;
  dagNodes: number;
  charts: number;
  /** titles of the hardware monitor's charts as uPlot drew them */
  monitorCharts: string[];
  monitorCanvases: number;
  monitorLegend: string[];
  sessionRules: number;
  sessionRows: number;
  /** text of the Failures section ('' when absent) */
  failure: string;
  /** text of the DAG section ('' when absent) */
  dagText: string;
  /**
   * Clicks a results column header once; returns the direction the header now shows and the
   * table's columns (header → the cells' text, top to bottom) in the order the page shows.
   */
  sortBy: (base: string, column: string) => Promise<{ dir: string | null; cols: Record<string, string[]> }>;
}

/** Opens the report offline, counts requests that are not the file itself, and takes a screenshot. */
async function open(runDir: string, shot: string, scrollTo?: string): Promise<Seen> {
  const context = await browser!.newContext({ offline: true, viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  const file = pathToFileURL(join(runDir, 'report.html')).href;
  const outside: string[] = [];
  const errors: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url === file) return route.continue();
    outside.push(url);
    return route.abort();
  });
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(file, { waitUntil: 'load', timeout: 60_000 });
  await page.waitForSelector('section#timeline svg.timeline', { timeout: 30_000 });
  const seen: Seen = {
    outside,
    errors,
    bars: await page.locator('svg.timeline rect.bar').count(),
    attemptsNote: (await page.locator('section#timeline p.note').last().textContent()) ?? '',
    resultRows: (base) => page.locator(`table.results[data-base="${base}"] tbody tr`).count(),
    dagNodes: await page.locator('svg.dag g.node').count(),
    charts: await page.locator('.chart canvas').count(),
    monitorCharts: await page.locator('.chart.monitor .u-title').allTextContents(),
    monitorCanvases: await page.locator('.chart.monitor canvas').count(),
    monitorLegend: [...new Set(await page.locator('.chart.monitor .u-legend .u-label').allTextContents())],
    sessionRules: await page.locator('svg.timeline g.session').count(),
    sessionRows: await page.locator('table.sessions tbody tr').count(),
    failure: (await page.locator('section#failures').count())
      ? ((await page.locator('section#failures').innerText()) ?? '')
      : '',
    dagText: (await page.locator('section#dag').count()) ? await page.locator('section#dag').innerText() : '',
    sortBy: async (base, column) => {
      const table = page.locator(`table.results[data-base="${base}"]`);
      const th = table.locator('thead th');
      // the header's own text, without the ▲/▼ the stylesheet adds after a click
      const heads = await th.allTextContents();
      const i = heads.findIndex((h) => h.trim() === column);
      if (i < 0) throw new Error(`no column ${column} in ${JSON.stringify(heads)}`);
      await th.nth(i).click();
      const dir = await th.nth(i).getAttribute('data-dir');
      const rows = await table.locator('tbody tr').evaluateAll((trs) =>
        trs.map((tr) => {
          // a <tr> in the page (no DOM types in this project's compiler settings)
          const cells = (tr as unknown as { cells: ArrayLike<{ textContent: string | null }> }).cells;
          return Array.from(cells, (c) => c.textContent ?? '');
        }),
      );
      const cols = Object.fromEntries(heads.map((h, k) => [h.trim(), rows.map((r) => r[k] ?? '')]));
      return { dir, cols };
    },
  };
  await page.screenshot({ path: join(ARTIFACTS, shot), fullPage: true });
  await page.screenshot({ path: join(ARTIFACTS, shot.replace(/\.png$/, '-top.png')) });
  if (scrollTo) {
    await page.locator(scrollTo).scrollIntoViewIfNeeded();
    await page
      .locator(scrollTo)
      .screenshot({ path: join(ARTIFACTS, shot.replace(/\.png$/, '-section.png')) });
  }
  return seen;
}

describe.skipIf(noBrowser !== undefined)(
  `report.html in headless Chromium${noBrowser ? ` (skipped: ${noBrowser})` : ''}`,
  () => {
    describe.skipIf(noShared !== undefined)(
      `spec examples${noShared ? ` (skipped: ${noShared})` : ''}`,
      () => {
        it('05 sweep: offline, no errors, 8 bars, 6 sweep rows; sorting by CONC works', async () => {
          const r = runRecipe([join(EXAMPLES, '05_sweep.yaml')]);
          cleanup.push(r.cwd);
          expect(r.code, r.stderr).toBe(0);
          const s = await open(r.runDir, 'report-05-sweep.png');
          expect(s.outside).toEqual([]);
          expect(s.errors).toEqual([]);
          expect(s.bars).toBe(8);
          expect(await s.resultRows('bench')).toBe(6);
          expect(s.dagNodes).toBe(8);
          expect(s.charts).toBeGreaterThan(0);

          // the table starts in sweep order (CONC 4, 4, 8, 8, 16, 16): sort by MODE first so
          // that sorting by CONC has rows to move; Array#sort is stable, so ties keep MODE order
          const byMode = await s.sortBy('bench', 'MODE');
          expect(byMode.dir).toBe('asc');
          expect(byMode.cols.MODE).toEqual(['fast', 'fast', 'fast', 'slow', 'slow', 'slow']);
          expect(byMode.cols.CONC).toEqual(['4', '8', '16', '4', '8', '16']);
          const up = await s.sortBy('bench', 'CONC');
          expect(up.dir).toBe('asc');
          expect(up.cols.CONC).toEqual(['4', '4', '8', '8', '16', '16']); // numeric, not '16' < '4'
          expect(up.cols.task).toEqual([
            'bench_4_fast',
            'bench_4_slow',
            'bench_8_fast',
            'bench_8_slow',
            'bench_16_fast',
            'bench_16_slow',
          ]);
          const down = await s.sortBy('bench', 'CONC');
          expect(down.dir).toBe('desc');
          expect(down.cols.CONC).toEqual(['16', '16', '8', '8', '4', '4']);
          expect(down.cols.task).toEqual([
            'bench_16_fast',
            'bench_16_slow',
            'bench_8_fast',
            'bench_8_slow',
            'bench_4_fast',
            'bench_4_slow',
          ]);
          expect(s.errors).toEqual([]);
        });

        it('06 services: offline, no errors, one bar per task, three DAG nodes', async () => {
          const [site, api] = await freePorts(2);
          const r = runRecipe(
            [join(EXAMPLES, '06_service_readiness.yaml')],
            ['-s', `SITE_PORT=${site}`, '-s', `API_PORT=${api}`],
          );
          cleanup.push(r.cwd);
          expect(r.code, r.stderr).toBe(0);
          const s = await open(r.runDir, 'report-06-services.png');
          expect(s.outside).toEqual([]);
          expect(s.errors).toEqual([]);
          expect(s.bars).toBe(3);
          expect(s.dagNodes).toBe(3);
        });
      },
    );

    it('a 1,000-task run: offline, no errors, 1,000 bars and rows; a header click sorts the table', async () => {
      const f = recipeFile(manyTasksRecipe(1000));
      cleanup.push(join(f, '..'));
      const r = runRecipe([f], [], 300_000);
      cleanup.push(r.cwd);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      const s = await open(r.runDir, 'report-1000-tasks.png');
      expect(s.outside).toEqual([]);
      expect(s.errors).toEqual([]);
      expect(s.bars).toBe(1000);
      expect(s.attemptsNote).toContain('1000 attempts');
      expect(await s.resultRows('t')).toBe(1000);
      expect(s.dagText).toMatch(/^DAG\b/);
      expect(s.dagNodes).toBeGreaterThan(0);

      // rows start in replica order (value 0…999): ascending, descending, then ascending again
      // from the reversed table, so each click has to move every row
      const asc = Array.from({ length: 1000 }, (_, i) => String(i));
      const desc = [...asc].reverse();
      const first = await s.sortBy('t', 'value');
      expect(first.dir).toBe('asc');
      expect(first.cols.value).toEqual(asc);
      const second = await s.sortBy('t', 'value');
      expect(second.dir).toBe('desc');
      expect(second.cols.value).toEqual(desc);
      expect(second.cols.replica).toEqual(desc); // whole rows moved, not just the one column
      const third = await s.sortBy('t', 'value');
      expect(third.dir).toBe('asc');
      expect(third.cols.value).toEqual(asc);
      expect(s.errors).toEqual([]);
    }, 360_000);

    it('a failed assertion: the failure with its expression, values and log tail is on the page', async () => {
      const f = recipeFile(`version: "0.1"
workflow:
  name: asserted
  tasks:
    - name: bench
      script:
        - echo "output_throughput: 0.0"
      result:
        output_throughput: 'output_throughput: ([\\d.]+)'
      assert:
        - "\${{ result.output_throughput > 0 }}"
    - name: after
      depends_on: [bench]
      script: [echo after]
`);
      cleanup.push(join(f, '..'));
      const r = runRecipe([f]);
      cleanup.push(r.cwd);
      expect(r.code).toBe(1);
      const s = await open(r.runDir, 'report-assert-failed.png');
      expect(s.outside).toEqual([]);
      expect(s.errors).toEqual([]);
      expect(s.bars).toBe(1);
      expect(s.failure).toContain('${{ result.output_throughput > 0 }}');
      expect(s.failure).toContain('result.output_throughput = 0.0');
      expect(s.failure).toContain('output_throughput: 0.0');
    });

    it('a monitored run: the hardware charts (per GPU, CPU, memory, network) render offline, no errors', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sflow-browser-mon-'));
      cleanup.push(dir);
      writeFileSync(join(dir, 'r.yaml'), MONITORED);
      const r = sflow(['run', '-f', 'r.yaml'], { cwd: dir, env: MONITOR_ENV, timeoutMs: 120_000 });
      expect(r.code, r.stderr).toBe(0);
      const s = await open(onlyRunDir(join(dir, 'sflow_output')), 'report-monitor.png', 'section#monitor');
      expect(s.outside).toEqual([]);
      expect(s.errors).toEqual([]);
      expect(s.monitorCharts).toEqual([
        'GPU utilisation',
        'GPU memory used',
        'CPU utilisation',
        'Memory used',
        'Network',
      ]);
      // one canvas per chart, drawn (uPlot sizes it; a chart that threw would leave none)
      expect(s.monitorCanvases).toBe(5);
      expect(s.monitorLegend).toEqual(expect.arrayContaining(['GPU 0', 'GPU 1', 'received', 'sent']));
    });

    it("a resumed sweep: both sessions' attempts on the timeline, the session rule and table", async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sflow-browser-resume-'));
      cleanup.push(dir);
      const r = resumedSweep(dir);
      expect(r.first.code).toBe(1);
      expect(r.resumed.code, r.resumed.stderr).toBe(0);
      const s = await open(r.runDir, 'report-resumed.png');
      expect(s.outside).toEqual([]);
      expect(s.errors).toEqual([]);
      // first session: prep and 8 rows; second: the 2 failed rows and collect
      expect(s.bars).toBe(12);
      expect(s.sessionRules).toBe(1);
      expect(s.sessionRows).toBe(2);
      expect(await s.resultRows('bench')).toBe(8);
    });

    it('a page that asks for the network is caught by the test (the check can fail)', async () => {
      const context = await browser!.newContext({ offline: true });
      const page = await context.newPage();
      const outside: string[] = [];
      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith('data:')) return route.continue();
        outside.push(url);
        return route.abort();
      });
      await page.setContent('<img src="http://example.invalid/x.png">');
      await page.waitForTimeout(200);
      expect(outside).toEqual(['http://example.invalid/x.png']);
      await context.close();
    });
  },
);
