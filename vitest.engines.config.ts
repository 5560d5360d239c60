import { defineConfig } from 'vitest/config';

// Real-engine suites (Slurm, Docker, SSH, Kubernetes emulator, browser, terminal): each runs with
// `npm run test:<engine>`; .ci/run starts the engines first. Not part of `npm test`.
export default defineConfig({
  test: {
    include: ['test/engines/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default'],
  },
});
