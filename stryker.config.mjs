// StrykerJS on the core modules (issue 31; docs/testing.md "Mutation testing"). Run it with
// `npm run test:mutation` (scripts/mutation.mjs: Stryker needs Node >= 22, the script brings the
// pinned Node 24 when this one is older, and takes `--group <name>` to mutate one group).
// The incremental file is kept in the repository: a later run mutates only what changed since.

/** the configured core, by group (scripts/mutation.mjs --group) */
export const groups = {
  expr: ['src/config/expr/**/*.ts'],
  plan: ['src/plan/dag.ts', 'src/plan/replicas.ts', 'src/plan/placement/**/*.ts'],
  probes: ['src/probes/**/*.ts'],
  runtime: ['src/runtime/retry.ts', 'src/runtime/task-probes.ts', 'src/runtime/orchestrator.ts'],
  outputs: ['src/outputs/results.ts', 'src/outputs/task-log.ts'],
  uploads: ['src/uploads/glob.ts'],
  launcher: ['src/util/launcher/client.ts', 'src/util/launcher/protocol.ts'],
  gpu: ['src/gpu/registry.ts', 'src/gpu/registry-dir.ts'],
};

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'vitest',
  // forks: some covered code (the exec probe) changes the working directory, which threads cannot
  vitest: { configFile: 'vitest.mutation.config.ts', pool: 'forks' },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.build.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: 'perTest',
  mutate: Object.values(groups).flat(),
  // static mutants (module-level constants) would rerun every test each: not worth it here
  ignoreStatic: true,
  incremental: true,
  // one stored report per group (scripts/mutation.mjs passes --incrementalFile test/mutation/<group>.json)
  incrementalFile: 'test/mutation/all.json',
  concurrency: 2,
  timeoutMS: 10_000,
  reporters: ['clear-text', 'progress'],
  clearTextReporter: { logTests: false, reportMutants: true, reportScoreTable: true },
  // the 80 % floor is checked by scripts/mutation.mjs on all groups together
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['dist', 'bench/results', 'release', 'coverage', 'reports', '.stryker-tmp'],
  cleanTempDir: 'always',
};
