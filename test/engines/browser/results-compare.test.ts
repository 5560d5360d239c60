/**
 * The `sflow results compare --html` page in Debian's headless Chromium (playwright-core, no
 * browser download), from disk with the network blocked: one point per configuration, the Pareto
 * front drawn through its points, and a click on a point opens the report of that run.
 *
 *   npm run test:browser
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { sflow } from '../../helpers/cli.js';
import { scratchDir } from '../../helpers/scratch.js';
import { SERVING_SWEEP } from '../../helpers/results-runs.js';
import { launchChromium, noBrowserReason } from './chromium.js';

const noBrowser = noBrowserReason();
let browser: Browser | undefined;
let work: string;

beforeAll(async () => {
  if (noBrowser) return;
  work = scratchDir('sflow-results-page-');
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
});

describe.skipIf(noBrowser)('results compare page', () => {
  it('draws the configurations and the Pareto front; clicking a point opens that run report', async () => {
    const out = join(work, 'out');
    // a real run of the stand-in sweep: four configurations, each with its report.html
    expect(sflow(['run', '-f', SERVING_SWEEP, '--output-dir', out]).code).toBe(0);
    const html = join(work, 'page', 'compare.html');
    const r = sflow([
      'results',
      'compare',
      out,
      '-m',
      'throughput_tok_s:max',
      '-m',
      'ttft_ms:min',
      '--html',
      html,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const runDir = join(
      out,
      readdirSync(out).find((d) => d.startsWith('serving_sweep-'))!,
    );

    const context = await browser!.newContext({ offline: true });
    const page = await context.newPage();
    const outside: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file://')) return route.continue();
      outside.push(url);
      return route.abort();
    });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
    expect(await page.locator('#scatter circle.pt').count()).toBe(4);
    expect(await page.locator('#scatter circle.pt.on-front').count()).toBe(2);
    const front = await page.locator('#scatter polyline.front').getAttribute('points');
    expect(front?.trim().split(/\s+/)).toHaveLength(2);
    // the front's ends are the two front points' centres
    const centres = await page.locator('#scatter circle.on-front').evaluateAll((cs) =>
      cs.map((c) => {
        // a <circle> in the page (no DOM types in this project's compiler settings)
        const el = c as unknown as { getAttribute(name: string): string | null };
        return `${el.getAttribute('cx')},${el.getAttribute('cy')}`;
      }),
    );
    expect(front!.trim().split(/\s+/).sort()).toEqual(centres.sort());
    expect(await page.locator('#best').textContent()).toContain('CONC=16 TP=2');
    const box = await page
      .locator('#scatter a[data-config="serving_sweep/bench CONC=16 TP=2"] circle')
      .boundingBox();
    expect(box).not.toBeNull();
    await Promise.all([
      page.waitForURL(/report\.html$/),
      page.mouse.click(box!.x + box!.width / 2, box!.y + box!.height / 2),
    ]);
    expect(decodeURIComponent(page.url())).toBe(pathToFileURL(join(runDir, 'report.html')).href);
    expect(await page.locator('h1').first().textContent()).toContain('serving_sweep');
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 180_000);
});
