/**
 * `sflow recover` reaches every namespace a run's attempts were in: a run resumed with another
 * `--kube-namespace` leaves attempts of one backend in two namespaces, and one recoverer (one
 * backend instance) must find each attempt's pods in its own namespace, not in the first one it
 * was asked about.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  L_ATTEMPT,
  L_TASK,
  labelValue,
  runNames,
  runLabels,
} from '../../../src/backends/kubernetes/names.js';
import { HANDLE_VERSION, type TaskHandle } from '../../../src/events/handle.js';
import { startEmulator, type Emulator } from '../../fixtures/k8s-emulator/server.js';
import { k8sBackend } from './backend-helpers.js';
import { required, sandboxMissing, shPod } from './harness.js';

const missing = sandboxMissing();

describe.skipIf(missing !== undefined && !required)(
  `recover across namespaces${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let emu: Emulator;
    const dir = mkdtempSync(join(tmpdir(), 'sflow-k8s-recover-ns-'));
    const runId = `recover-ns-${process.pid}`;

    beforeAll(async () => {
      emu = await startEmulator({ nodes: 1, namespaces: ['team-b'], warnUnsupported: false });
    });
    afterAll(async () => {
      await emu?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    /** a running pod labelled as attempt 1 of `task` of the run, in `namespace` */
    async function attemptPod(namespace: string, task: string): Promise<TaskHandle> {
      const pod = `sf-${task}-a1-0`;
      const labels = {
        ...runLabels(runNames(runId), 'k8s', 'task'),
        [L_TASK]: labelValue(task),
        [L_ATTEMPT]: '1',
      };
      const res = await fetch(`${emu.url}/api/v1/namespaces/${namespace}/pods`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(shPod(pod, 'exec sleep 600', {}, labels)),
      });
      expect(res.status).toBe(201);
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const p = (await (await fetch(`${emu.url}/api/v1/namespaces/${namespace}/pods/${pod}`)).json()) as {
          status?: { phase?: string };
        };
        if (p.status?.phase === 'Running') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      return {
        v: HANDLE_VERSION,
        backend: 'k8s',
        type: 'kubernetes',
        runId,
        task,
        attempt: 1,
        state: 'RUNNING',
        nodes: ['node-0'],
        engine: { kind: 'kubernetes', namespace, pods: [pod] },
        remoteIds: [`${namespace}/${pod}`],
        submittedAt: new Date().toISOString(),
        logPath: join(dir, `${task}.log`),
      };
    }

    const podsIn = (namespace: string): string[] =>
      (
        emu.store.list('pods', namespace) as Array<{
          metadata: { name: string; labels?: Record<string, string> };
        }>
      )
        .filter((p) => p.metadata.labels?.['sflow/run'] === runNames(runId).label)
        .map((p) => p.metadata.name);

    it("one recoverer deletes each attempt's pods in the attempt's own namespace", async () => {
      const first = await attemptPod('default', 'prep');
      const resumed = await attemptPod('team-b', 'serve');
      expect(podsIn('default')).toEqual(['sf-prep-a1-0']);
      expect(podsIn('team-b')).toEqual(['sf-serve-a1-0']);
      const recoverer = k8sBackend(emu, {}, { runId, runDir: dir });
      const opts = { graceMs: 1000 };
      const a = await recoverer.recover(first, opts, AbortSignal.timeout(30_000));
      expect(a).toMatchObject({ found: true, stop: { gone: true } });
      expect(a.detail).toContain('namespace default');
      const b = await recoverer.recover(resumed, opts, AbortSignal.timeout(30_000));
      expect(b).toMatchObject({ found: true, stop: { gone: true } });
      expect(b.detail).toContain('namespace team-b');
      expect(podsIn('default')).toEqual([]);
      expect(podsIn('team-b')).toEqual([]);
      // and the first namespace again, after the second: each call reads its own
      const again = await recoverer.recover(first, opts, AbortSignal.timeout(30_000));
      expect(again.found).toBe(false);
      expect(again.detail).toContain('namespace default');
    });
  },
);
