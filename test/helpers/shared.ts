/**
 * Tests that read the read-only reference checkout next to the repository (`<repo>/../shared`:
 * the original tool's recipes in compat/, the spec examples) find it here. A fresh clone has no
 * such sibling: those tests then skip with one line naming what is missing, unless
 * SFLOW_REQUIRE_SHARED=1 (set by .ci/run), which turns the absence into a failure.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/**
 * `<repo>/../shared`, or SFLOW_SHARED_DIR when set: the mutation runs (scripts/mutation.mjs) test
 * a copy of the repository in a sandbox folder, whose `..` holds no shared checkout.
 */
export const SHARED = process.env.SFLOW_SHARED_DIR || resolve(REPO, '..', 'shared');

/** `<repo>/../shared/<rel>` */
export function sharedPath(...rel: string[]): string {
  return join(SHARED, ...rel);
}

/** Why a test needing `<repo>/../shared/<rel>` cannot run here, or undefined when it can. */
export function sharedMissing(rel: string): string | undefined {
  const p = sharedPath(rel);
  return existsSync(p) ? undefined : `needs ../shared/${rel} (not found at ${p})`;
}

const announced = new Set<string>();

/**
 * `describe(title, body)` when `../shared/<rel>` exists. Otherwise a skipped block whose title
 * says what is missing (and one stderr line), or, with SFLOW_REQUIRE_SHARED=1, a failing test.
 */
export function describeWithShared(
  rel: string,
  title: string,
  ...args: [body: () => void] | [opts: { sequential?: boolean; timeout?: number }, body: () => void]
): void {
  const [opts, body] = args.length === 1 ? [{}, args[0]] : args;
  const missing = sharedMissing(rel);
  if (!missing) {
    (opts.sequential ? describe.sequential : describe)(title, { timeout: opts.timeout }, body);
    return;
  }
  if (process.env.SFLOW_REQUIRE_SHARED === '1') {
    describe(title, () => {
      it(missing, () => {
        throw new Error(`${missing}; SFLOW_REQUIRE_SHARED=1 makes its absence a failure`);
      });
    });
    return;
  }
  if (!announced.has(rel)) {
    announced.add(rel);
    process.stderr.write(`⤼ skipped: ${title}: ${missing}\n`);
  }
  describe.skip(`${title} (skipped: ${missing})`, () => {
    it('skipped', () => undefined);
  });
}
