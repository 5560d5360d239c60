/**
 * The access reviews of the Kubernetes pre-flight run all at once; the caller's signal (long-lived:
 * a run's) must not carry one abort listener per review — 11 or more printed Node's
 * MaxListenersExceededWarning in every Kubernetes run — and keeps none once the checks are done.
 * The KubeApi here is a stand-in at its method boundary: each review waits until all have started.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { KubeApi } from '../../../src/backends/kubernetes/client.js';
import { accessPreflight, requiredChecks } from '../../../src/backends/kubernetes/preflight.js';
import { boundedCall } from '../../../src/util/bounded-call.js';

function fakeApi(caller: AbortSignal, seen: number[]): KubeApi {
  const total = requiredChecks(true).length;
  let started = 0;
  let release!: () => void;
  const all = new Promise<void>((r) => (release = r));
  const api = {
    namespace: 'default',
    call: (
      _k: string,
      verb: string,
      _r: string,
      _n: string,
      fn: (o: object) => Promise<unknown>,
      o: { signal?: AbortSignal },
    ) => boundedCall('kubernetes', [verb], () => fn({}), { timeoutMs: 10_000, signal: o.signal }),
    authz: {
      async createSelfSubjectAccessReview() {
        if (++started === total) release();
        await all;
        seen.push(getEventListeners(caller, 'abort').length);
        return { status: { allowed: true } };
      },
    },
    core: { readNamespace: () => Promise.resolve({}) },
  };
  return api as unknown as KubeApi;
}

describe('Kubernetes pre-flight', () => {
  it('runs its access reviews at once with one abort listener on the caller signal, none left after', async () => {
    const caller = new AbortController().signal;
    const seen: number[] = [];
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      expect(await accessPreflight(fakeApi(caller, seen), 'k8s', true, caller)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
    expect(seen).toHaveLength(requiredChecks(true).length);
    expect(Math.max(...seen)).toBeLessThanOrEqual(1);
    expect(getEventListeners(caller, 'abort')).toHaveLength(0);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
