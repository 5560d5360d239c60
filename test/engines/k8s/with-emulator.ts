/**
 * The emulator of one suite: started in `beforeAll` (a suite whose sandbox is missing fails there
 * when engines are required), stopped in `afterAll`, where the scratch folders the suite collected
 * in `dirs` are removed too. The returned handle reads the started emulator lazily, so tests and
 * helpers use it as they would the result of startK8s.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import type { EmulatorOptions } from '../../fixtures/k8s-emulator/server.js';
import { startK8s, type K8s } from './harness.js';

export interface WithEmulatorOptions {
  /** runs once the emulator is up (objects the whole suite needs) */
  setup?: (k: K8s) => Promise<unknown>;
  /** folders to remove after the suite (filled while it runs) */
  dirs?: string[];
}

export function withEmulator(
  missing: string | undefined,
  opts: EmulatorOptions,
  o: WithEmulatorOptions = {},
): K8s {
  let started: K8s | undefined;
  beforeAll(async () => {
    if (missing) throw new Error(missing);
    started = await startK8s(opts);
    await o.setup?.(started);
  });
  afterAll(async () => {
    await started?.emu.stop();
    for (const d of o.dirs ?? []) rmSync(d, { recursive: true, force: true });
  });
  const get = (): K8s => {
    if (!started) throw new Error('the emulator of this suite did not start');
    return started;
  };
  return {
    get emu() {
      return get().emu;
    },
    get kc() {
      return get().kc;
    },
    get core() {
      return get().core;
    },
  };
}
