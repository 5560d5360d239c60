/**
 * vitest globalSetup of the mutation runs (vitest.mutation.config.ts): the same private temp
 * folder as `npm test` (test/helpers/private-tmp.ts), without the leftover check. Stryker ends a
 * worker whose mutant hangs, so that worker's after-hooks never run; what they would have removed
 * goes with the folder at the end, or with the next run's sweep when Stryker itself was killed.
 * No build: the mutated modules run in process.
 */
import { privateTmp } from '../helpers/private-tmp.js';

export default function setup(): () => void {
  return privateTmp({ checkLeft: false });
}
