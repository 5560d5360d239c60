/**
 * Debian's Chromium for the browser suite (playwright-core drives it; nothing is downloaded): its
 * path, the flags every test launches it with, and the named reason a machine without it skips
 * (a failure under SFLOW_REQUIRE_ENGINES=1, as in CI).
 */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

export const CHROMIUM = process.env.SFLOW_CHROMIUM ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** why the browser tests skip here, or undefined when Chromium is installed */
export function noBrowserReason(): string | undefined {
  const why = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} not found (apt-get install chromium)`;
  if (why && process.env.SFLOW_REQUIRE_ENGINES === '1') throw new Error(`SFLOW_REQUIRE_ENGINES=1 but ${why}`);
  return why;
}

/** playwright-core is loaded only when a test launches the browser */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS, timeout: 60_000 });
}
