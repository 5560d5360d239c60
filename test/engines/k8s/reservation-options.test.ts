/**
 * Reservation and placement options through `sflow run` on the emulator, checked in the
 * manifests and the order of the requests the emulator received: the GPU hand-off from a node's
 * placeholder to a task pod (`create_before_destroy`, `destroy_before_create`, and `auto`, which
 * picks the latter only under a `requests.nvidia.com/gpu` ResourceQuota); `include_nodes`,
 * `node_selector` and `tolerations` on the reservation and task pods (only the tainted, labelled,
 * included node fits); and `SFLOW_K8S_PROBE_VIA_POD=0` (the readiness probe runs from the driver:
 * no probe pod is created).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { taskLog } from '../../helpers/run-dir.js';
import { leftovers } from './backend-helpers.js';
import { freePort, required, sandboxMissing } from './harness.js';
import { withEmulator } from './with-emulator.js';
import { runRecipe } from './run-recipe.js';

const missing = sandboxMissing();
const TAINT = { key: 'dedicated', value: 'infer', effect: 'NoSchedule' as const };

interface Req {
  method: string;
  path: string;
  body?: unknown;
}
type Pod = {
  metadata: { name: string };
  spec: { nodeSelector?: Record<string, string>; tolerations?: unknown[]; affinity?: unknown };
};

describe.skipIf(missing !== undefined && !required)(
  `reservation options on the emulator${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const tmp = mkdtempSync(join(tmpdir(), 'sflow-k8s-resv-'));
    const dirs: string[] = [tmp];
    const k = withEmulator(
      missing,
      {
        nodes: [
          { name: 'n-a', gpus: 4, labels: { pool: 'gpu' } },
          { name: 'n-b', gpus: 4, labels: { pool: 'gpu' }, taints: [TAINT] },
          { name: 'n-c', gpus: 4, labels: { pool: 'cpu' } },
        ],
        namespaces: ['quota'],
      },
      {
        dirs,
        setup: (k) =>
          k.core.createNamespacedResourceQuota({
            namespace: 'quota',
            body: { metadata: { name: 'gpus' }, spec: { hard: { 'requests.nvidia.com/gpu': '8' } } },
          }),
      },
    );

    let n = 0;
    function recipe(backend: string, tasks: string): string {
      const f = join(tmp, `r${++n}.yaml`);
      writeFileSync(
        f,
        `version: '0.1'\nbackends:\n  - name: cluster\n    type: kubernetes\n    default: true\n${backend}` +
          `operators:\n  - name: pod\n    type: k8s\n    image: bash:5\nworkflow:\n  name: resv\n  tasks:\n${tasks}`,
      );
      return f;
    }
    const GPU_TASK = `    - name: use
      operator: pod
      resources: { gpus: { count: 4 } }
      script: [echo "on $(hostname)"]
`;

    /** requests of the last run: is the task pod created before its node's placeholder is deleted? */
    function createdBeforeDestroyed(before: number): boolean {
      const reqs = (k.emu.requests() as Req[]).slice(before);
      const create = reqs.findIndex(
        (q) => q.method === 'POST' && q.path.endsWith('/pods') && JSON.stringify(q.body).includes('"sf-use-'),
      );
      const destroy = reqs.findIndex((q) => q.method === 'DELETE' && /\/pods\/sf-resv-/.test(q.path));
      expect(create, 'task pod created').toBeGreaterThanOrEqual(0);
      expect(destroy, 'placeholder deleted').toBeGreaterThanOrEqual(0);
      return create < destroy;
    }

    it.each([
      ['create_before_destroy', 'default', true],
      ['destroy_before_create', 'default', false],
      ['auto', 'default', true],
      ['auto', 'quota', false],
    ] as const)(
      'handoff %s in namespace %s: task pod created before the placeholder goes: %s',
      async (mode, ns, first) => {
        const f = recipe(
          `    namespace: ${ns}\n    nodes: 1\n    gpus_per_node: 4\n    include_nodes: [n-a]\n    reservation: { timeout: 60, handoff: ${mode} }\n`,
          GPU_TASK,
        );
        const before = k.emu.requests().length;
        const r = await runRecipe(k, [f], [], dirs);
        expect(r.code, r.stderr + r.stdout).toBe(0);
        expect(taskLog(r.runDir, 'use')).toBe('on n-a\n');
        expect(createdBeforeDestroyed(before)).toBe(first);
        expect(leftovers(k.emu, ns)).toEqual([]);
      },
    );

    it('include_nodes, node_selector and tolerations: only the included, labelled node the toleration opens fits', async () => {
      const f = recipe(
        `    namespace: default\n    nodes: 1\n    gpus_per_node: 4\n    include_nodes: [n-b, n-c]\n` +
          `    node_selector: { pool: gpu }\n` +
          `    tolerations: [{ key: dedicated, operator: Equal, value: infer, effect: NoSchedule }]\n` +
          `    reservation: { timeout: 60 }\n`,
        GPU_TASK,
      );
      const before = k.emu.requests().length;
      const r = await runRecipe(k, [f], [], dirs);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(taskLog(r.runDir, 'use')).toBe('on n-b\n');
      const created = (k.emu.requests() as Req[])
        .slice(before)
        .filter((q) => q.method === 'POST' && q.path.endsWith('/pods'))
        .map((q) => q.body as Pod);
      const resv = created.find((p) => p.metadata.name.startsWith('sf-resv-'))!;
      const task = created.find((p) => p.metadata.name.startsWith('sf-use-'))!;
      expect(resv.spec.nodeSelector).toMatchObject({ pool: 'gpu' });
      expect(JSON.stringify(resv.spec.affinity)).toContain(
        '{"key":"kubernetes.io/hostname","operator":"In","values":["n-b","n-c"]}',
      );
      expect(task.spec.nodeSelector).toMatchObject({ pool: 'gpu', 'kubernetes.io/hostname': 'n-b' });
      for (const p of [resv, task])
        expect(p.spec.tolerations).toContainEqual({ ...TAINT, operator: 'Equal' });
      expect(leftovers(k.emu)).toEqual([]);
    });

    it('SFLOW_K8S_PROBE_VIA_POD=0: the readiness probe runs from the driver, no probe pod', async () => {
      const port = await freePort();
      const f = recipe(
        `    namespace: default\n    nodes: 1\n    gpus_per_node: 4\n    include_nodes: [n-a]\n    reservation: { timeout: 60 }\n`,
        `    - name: server
      operator: pod
      script:
        - exec python3 -m http.server ${port} --bind 127.10.0.1
      probes:
        readiness:
          tcp_port: { port: ${port} }
          interval: 1
          timeout: 60
    - name: client
      operator: pod
      depends_on: [server]
      script: [echo client ran]
`,
      );
      const before = k.emu.requests().length;
      const r = await runRecipe(k, [f], [], dirs, { SFLOW_K8S_PROBE_VIA_POD: '0' });
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(r.statuses).toEqual({ server: 'READY', client: 'COMPLETED' });
      const posted = (k.emu.requests() as Req[])
        .slice(before)
        .filter((q) => q.method === 'POST' && q.path.endsWith('/pods'))
        .map((q) => (q.body as Pod).metadata.name);
      expect(posted.some((x) => x.startsWith('sf-probe-'))).toBe(false);
      expect(posted.some((x) => x.startsWith('sf-server-'))).toBe(true);
      expect(leftovers(k.emu)).toEqual([]);
    });
  },
);
