import { defineConfig } from 'vitest/config';

// The release as users get it (test/release/): `npm run release` once, then its tarball installed
// into an empty prefix and run from an unrelated folder. `npm run test:release`; .ci/run runs it
// once. Not part of `npm test` (it builds both executables and installs the package: minutes).
export default defineConfig({
  test: {
    include: ['test/release/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 600_000,
    hookTimeout: 1_600_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default'],
  },
});
