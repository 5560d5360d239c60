import { defineConfig } from 'vitest/config';

/**
 * The tests StrykerJS runs against each mutant (stryker.config.mjs, docs/testing.md "Mutation
 * testing"): the fast in-process unit tests of the mutated core modules, plus the small
 * integration files that cover the launcher and the task log. No CLI builds, no engines.
 */
export default defineConfig({
  test: {
    include: [
      'test/unit/expr/**/*.test.ts',
      'test/unit/config/**/*.test.ts',
      'test/unit/plan/**/*.test.ts',
      'test/unit/placement/**/*.test.ts',
      'test/unit/artifacts/upload-keys.test.ts',
      'test/unit/uploads/**/*.test.ts',
      'test/unit/probes/**/*.test.ts',
      'test/unit/runtime/**/*.test.ts',
      'test/unit/outputs/**/*.test.ts',
      'test/unit/gpu/**/*.test.ts',
      'test/unit/util/launcher-protocol.test.ts',
      'test/unit/util/guarded-regex.test.ts',
      'test/integration/launcher.test.ts',
      'test/integration/launcher-lifecycle.test.ts',
      'test/integration/launcher-batching.test.ts',
      'test/integration/task-log.test.ts',
      'test/integration/launcher-choice.test.ts',
    ],
    globalSetup: ['test/mutation/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
