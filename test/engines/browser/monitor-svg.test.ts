/**
 * The monitor's timeline.svg in a real browser: Debian's headless Chromium (/usr/bin/chromium)
 * driven by playwright-core through `executablePath` (no browser download). The chart must parse
 * as XML (DOMParser, image/svg+xml), open from disk without console errors or network requests,
 * and render one visible line per GPU with its label.
 *
 *   npm run test:browser
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { buildMonitorReports } from '../../../src/monitor/reports.js';
import { S, T0, writeRawRun } from '../../helpers/monitor-raw.js';
import { launchChromium, noBrowserReason } from './chromium.js';

const noBrowser = noBrowserReason();
const root = mkdtempSync(join(tmpdir(), 'sflow-mon-browser-'));
let browser: Browser | undefined;

beforeAll(async () => {
  if (noBrowser) return;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(noBrowser)(
  `monitor timeline.svg in Chromium${noBrowser ? ` (skipped: ${noBrowser})` : ''}`,
  () => {
    it('parses as XML and renders one line and label per GPU, with event markers', async () => {
      writeRawRun(root, ['h1']);
      await buildMonitorReports({
        runDir: root,
        workflow: 'wf',
        runId: 'wf-1',
        schedule: {
          monitors: [],
          collectors: [],
          warnings: [],
          views: [
            {
              path: 'lifecycle/workflow/',
              group: 'lifecycle',
              note: 'whole-pool aggregate',
              windowTask: null,
              window: null,
              targets: [{ host: 'localhost', gpus: 'all' }],
              scopes: ['gpu', 'cpu', 'memory'],
              formats: ['svg'],
            },
          ],
        },
        collectors: [
          { host: 'localhost', name: 'h1', nodeId: '0', start: T0, stop: T0 + S * 1000, intervalMs: 1000 },
        ],
        runStart: T0,
        runEnd: T0 + (S - 1) * 1000,
        events: [
          { t: T0 + 2000, task: 'server', kind: 'submit' },
          { t: T0 + 9000, task: 'server', kind: 'ready' },
          { t: T0 + 50_000, task: 'bench', kind: 'done' },
        ],
        taskSpans: new Map(),
        markerLines: () => ({ lines: [], searched: 0 }),
        rasterize: null,
      });
      const file = join(root, 'sflow_monitor/lifecycle/workflow/timeline.svg');
      const page = await browser!.newPage();
      const problems: string[] = [];
      page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('request', (r) => !r.url().startsWith('file:') && problems.push(`request ${r.url()}`));
      const text = readFileSync(file, 'utf8');
      await page.goto(pathToFileURL(file).href);
      // page-side code as text: the project's TypeScript has no DOM types
      const parsed = await page.evaluate<{ root: string; errors: number }>(`(() => {
      const doc = new DOMParser().parseFromString(${JSON.stringify(text)}, 'image/svg+xml');
      return { root: doc.documentElement.nodeName, errors: doc.getElementsByTagName('parsererror').length };
    })()`);
      expect(parsed).toEqual({ root: 'svg', errors: 0 });
      const shown = await page.evaluate<{
        root: string;
        lines: Array<{ id: string; w: number; h: number }>;
        labels: Array<{ text: string; w: number }>;
        markers: string[];
      }>(`(() => {
      const panel = 'g[data-panel="gpu_utilization_pct"]';
      const lines = [...document.querySelectorAll(panel + ' polyline.series')];
      const labels = [...document.querySelectorAll(panel + ' text.series-label')];
      return {
        root: document.documentElement.nodeName,
        lines: lines.map((l) => ({ id: l.getAttribute('data-series'), w: l.getBBox().width, h: l.getBBox().height })),
        labels: labels.map((l) => ({ text: l.textContent, w: l.getBBox().width })),
        markers: [...document.querySelectorAll('text.event-label')].map((t) => t.textContent),
      };
    })()`);
      expect(shown.root).toBe('svg');
      expect(shown.lines.map((l) => l.id)).toEqual(['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3']);
      for (const l of shown.lines.slice(0, 3)) expect(l.w).toBeGreaterThan(700); // spans the run
      expect(shown.labels.map((l) => l.text)).toEqual([
        expect.stringMatching(/^GPU 0 · avg [\d.]+% · max [\d.]+%$/),
        expect.stringMatching(/^GPU 1 · /),
        expect.stringMatching(/^GPU 2 · /),
        'GPU 3 · avg 0.0% · max 0.0%',
      ]);
      for (const l of shown.labels) expect(l.w).toBeGreaterThan(50);
      expect(shown.markers).toEqual(['server submit', 'server ready', 'bench done']);
      await page.screenshot({ path: join(root, 'timeline.png') });
      expect(problems).toEqual([]);
      await page.close();
    });
  },
);
