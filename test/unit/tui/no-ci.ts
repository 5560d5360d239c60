// Imported first by the live-view tests: ink renders nothing live under CI=… (see
// src/reporters/tui/ci-env.ts), and these tests read its live frames.
export const savedCi = { CI: process.env.CI, CONTINUOUS_INTEGRATION: process.env.CONTINUOUS_INTEGRATION };
for (const k of ['CI', 'CONTINUOUS_INTEGRATION']) if (k in process.env) process.env[k] = 'false';

export function restoreCi(): void {
  for (const [k, v] of Object.entries(savedCi)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}
