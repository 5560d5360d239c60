/**
 * The Kubernetes backend's pre-flight and node reservation against the emulator: a missing
 * namespaced permission fails with every missing right and a hint, a cluster-scoped one only
 * warns, SFLOW_SKIP_K8S_PREFLIGHT=1 skips the reviews; the allocation reports real node names,
 * IPs and the GPU count derived from allocatable, honours exclude_nodes, and a reservation that
 * cannot be placed fails after reservation.timeout naming the waiting pod. Nothing is left behind.
 */
import { setMaxListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { k8sBackend, leftovers } from './backend-helpers.js';
import { required, sandboxMissing, shPod } from './harness.js';
import { withEmulator } from './with-emulator.js';

const missing = sandboxMissing();
/** a run's signal: many bounded calls listen on it at once (the session raises the limit the same way) */
const never = () => {
  const s = new AbortController().signal;
  setMaxListeners(0, s);
  return s;
};

describe.skipIf(missing !== undefined && !required)(
  `Kubernetes pre-flight and reservation${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const k = withEmulator(missing, { nodes: 3, gpus: 4 });

    function backend(config: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
      const logs: string[] = [];
      const b = k8sBackend(k.emu, config, {
        gpuTasks: true,
        log: (m) => logs.push(m),
        env: { ...process.env, SFLOW_K8S_WAIT_HEARTBEAT_SECS: '1', ...env },
      });
      return { b, logs };
    }

    it('a denied namespaced right fails with all of them and a hint; a cluster-scoped one warns', async () => {
      k.emu.deny.add('create secrets');
      k.emu.deny.add('get pods/log');
      k.emu.deny.add('list nodes');
      try {
        const { b } = backend({});
        const err = await b.preflight(never()).then(
          () => undefined,
          (e: unknown) => e as Error & { hint?: string },
        );
        expect(err?.message).toMatch(/lacks 2 permission\(s\) in namespace 'default'/);
        expect(err?.message).toMatch(/create secrets — needed for the task environment/);
        expect(err?.message).toMatch(/pods\/log/);
        expect(err?.hint).toMatch(/Role in 'default'.*SFLOW_SKIP_K8S_PREFLIGHT=1/);

        k.emu.deny.delete('create secrets');
        k.emu.deny.delete('get pods/log');
        const ok = backend({});
        await ok.b.preflight(never());
        expect(ok.logs.join('\n')).toMatch(/not allowed to list nodes .*continuing with less detection/);

        k.emu.deny.add('create secrets');
        const before = k.emu.requests().filter((q) => q.path.includes('selfsubjectaccessreviews')).length;
        const skipped = backend({}, { SFLOW_SKIP_K8S_PREFLIGHT: '1' });
        await skipped.b.preflight(never());
        expect(k.emu.requests().filter((q) => q.path.includes('selfsubjectaccessreviews')).length).toBe(
          before,
        );
      } finally {
        k.emu.deny.clear();
      }
    });

    it('reserves real nodes: names, IPs, GPUs from allocatable, exclude_nodes honoured', async () => {
      const { b } = backend({ nodes: 2, gpus_per_node: undefined, exclude_nodes: ['node-0'] });
      await b.preflight(never());
      const a = await b.allocate(never(), () => undefined);
      expect(a.nodes.map((n) => [n.name, n.ip, n.numGpus])).toEqual([
        ['node-1', '127.10.0.2', 4],
        ['node-2', '127.10.0.3', 4],
      ]);
      expect(leftovers(k.emu).filter((o) => o.startsWith('pods/sf-resv-')).length).toBe(2);
      await b.release(never());
      await expect.poll(() => leftovers(k.emu), { timeout: 20_000 }).toEqual([]);
    });

    it('a reservation that cannot be placed fails after reservation.timeout, naming the waiting pod', async () => {
      // node-0's GPUs are all taken: its placeholder stays Pending, and every other node is in use
      await k.core.createNamespacedPod({
        namespace: 'default',
        body: shPod('hog', 'sleep 600', {
          nodeName: 'node-0',
          containers: [
            {
              name: 'main',
              image: 'bash:5',
              command: ['sleep', '600'],
              resources: { limits: { 'nvidia.com/gpu': '4' } },
            },
          ],
        }),
      });
      try {
        const { b, logs } = backend({ nodes: 3, gpus_per_node: 4, reservation: { timeout: 3 } });
        await b.preflight(never());
        const err = await b
          .allocate(never(), (m) => logs.push(m))
          .then(
            () => undefined,
            (e: unknown) => e as Error,
          );
        expect(err?.message).toMatch(
          /1 of 3 reservation pod\(s\) not running after 3s:\n {2}sf-resv-\S+-0: /,
        );
        await b.release(never());
        await expect.poll(() => leftovers(k.emu), { timeout: 20_000 }).toEqual([]);
      } finally {
        await k.core.deleteNamespacedPod({ name: 'hog', namespace: 'default', gracePeriodSeconds: 0 });
      }
    });
  },
);
