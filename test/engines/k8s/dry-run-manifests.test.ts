/**
 * `--dry-run` of a Kubernetes recipe prints each pod's manifest, and it is the pod the run sends:
 * the dry-run's YAML is compared, field by field, with the bodies the emulator received when the
 * same recipe really ran — a 2-node GPU task with host network, shm size, tolerations, a node
 * selector, a volume and a file:// artifact, and (the original's smoke recipe) a merged pod. Only
 * what a dry-run cannot know differs and is normalised: the run id (names, labels, paths), the
 * node each pod is pinned to (placeholders) and the driver annotation (and the working folder,
 * each call its own). The run's summary fills
 * the GPU assignment of these GPU tasks.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runNames } from '../../../src/backends/kubernetes/names.js';
import { sflowInProcess } from '../../helpers/cli-inprocess.js';
import { scratchDir } from '../../helpers/scratch.js';
import { sharedMissing, sharedPath } from '../../helpers/shared.js';
import { leftovers } from './backend-helpers.js';
import { required, sandboxMissing } from './harness.js';
import { runRecipe } from './run-recipe.js';
import { withEmulator } from './with-emulator.js';

const missing = sandboxMissing();
const SMOKE = 'compat/examples/self_contained/kubernetes/merge_pod_smoke.yaml';
const noShared = sharedMissing(SMOKE);

type Obj = Record<string, unknown>;
interface Req {
  method: string;
  path: string;
  body?: Obj;
}

/** the pod manifests a dry-run printed (the indented YAML under each `pod manifest` line) */
function dryRunPods(stdout: string): Obj[] {
  const lines = stdout.split('\n');
  const pods: Obj[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^ {6}pod manifests? .*:$/.test(lines[i])) continue;
    const block: string[] = [];
    for (i++; i < lines.length && lines[i].startsWith('        '); i++) block.push(lines[i].slice(8));
    for (const d of parseAllDocuments(block.join('\n'))) pods.push(d.toJS() as Obj);
  }
  return pods;
}

/** a pod with what only a run knows replaced by placeholders */
function normalised(pod: Obj, runId: string, runDir: string, cwd: string): Obj {
  const text = JSON.stringify(pod)
    .replaceAll(runDir, '<RUN_DIR>')
    .replaceAll(cwd, '<CWD>')
    .replaceAll(runId, '<RUN_ID>')
    .replaceAll(runNames(runId).hash, '<HASH>');
  const p = JSON.parse(text) as {
    metadata: { annotations: Obj };
    spec: { nodeSelector?: Obj };
  };
  p.metadata.annotations['sflow/driver'] = '<DRIVER>';
  if (p.spec.nodeSelector?.['kubernetes.io/hostname'])
    p.spec.nodeSelector['kubernetes.io/hostname'] = '<NODE>';
  return p;
}

const byName = (a: Obj, b: Obj) =>
  String((a.metadata as Obj).name).localeCompare(String((b.metadata as Obj).name));

const RECIPE = `version: '0.1'
artifacts:
  - name: CONFIG
    uri: file://config.json
    content: '{"batch": 8}'
backends:
  - name: cluster
    type: kubernetes
    default: true
    namespace: default
    nodes: 2
    gpus_per_node: 4
    host_ipc: true
    tolerations: [{key: dedicated, operator: Equal, value: infer, effect: NoSchedule}]
    volumes:
      - {name: scratch, empty_dir: {medium: Memory, size_limit: 1Gi}, mount_path: /scratch}
    reservation: {timeout: 60}
operators:
  - name: trainer
    type: k8s
    image: bash:5
    host_network: true
    shm_size: 2Gi
    memory: 1Gi
    node_selector: {pool: gpu}
workflow:
  name: k8s_manifest_check
  tasks:
    - name: train
      operator: trainer
      resources: {nodes: {count: 2}, gpus: {count: 8}}
      script: ['echo "rank $SFLOW_TASK_NODE_INDEX on $SFLOW_TASK_NODE_NAME: $(cat $CONFIG)"']
`;

describe.skipIf(missing !== undefined && !required)(
  `dry-run pod manifests are the pods a run sends${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const dirs: string[] = [];
    const k = withEmulator(
      missing,
      {
        nodes: [
          { name: 'g-0', gpus: 4, labels: { pool: 'gpu' } },
          { name: 'g-1', gpus: 4, labels: { pool: 'gpu' } },
        ],
      },
      { dirs },
    );

    /** the dry-run's pods and the run's, normalised, plus the run */
    async function both(files: string[], extra: string[] = []) {
      const cwd = scratchDir('sflow-k8s-dry-');
      const dry = await sflowInProcess(['run', ...files.flatMap((f) => ['-f', f]), ...extra, '--dry-run'], {
        cwd,
      });
      expect(dry.code, dry.stderr + dry.stdout).toBe(0);
      const planned = dryRunPods(dry.stdout);
      expect(planned.length).toBeGreaterThan(0);
      const dryDir = /^workflow_output_dir \(planned, not created\): (.+)$/m.exec(dry.stdout)![1];
      const dryId = String(((planned[0].metadata as Obj).annotations as Obj)['sflow/run-id']);
      const before = k.emu.requests().length;
      const r = await runRecipe(k, files, extra, dirs);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const sent = (k.emu.requests() as Req[])
        .slice(before)
        .filter((q) => q.method === 'POST' && q.path.endsWith('/pods'))
        .map((q) => q.body!)
        .filter((p) => !/^sf-(resv|probe)-/.test(String((p.metadata as Obj).name)));
      return {
        planned: planned.map((p) => normalised(p, dryId, dryDir, cwd)).sort(byName),
        sent: sent.map((p) => normalised(p, basename(r.runDir), r.runDir, r.cwd)).sort(byName),
        run: r,
      };
    }

    it('a 2-node GPU task: both pods, field by field; the summary fills its GPU assignment', async () => {
      const dir = scratchDir('sflow-k8s-dry-recipe-');
      const f = join(dir, 'train.yaml');
      writeFileSync(f, RECIPE);
      const { planned, sent, run } = await both([f]);
      expect(sent).toHaveLength(2);
      expect(planned).toEqual(sent);
      // what the issue named is really in them
      const spec = sent[0].spec as Obj & { containers: Obj[]; volumes: Obj[] };
      expect(spec).toMatchObject({ hostNetwork: true, hostIPC: true, nodeSelector: { pool: 'gpu' } });
      expect(spec.tolerations).toEqual([
        { key: 'dedicated', operator: 'Equal', value: 'infer', effect: 'NoSchedule' },
      ]);
      expect(spec.containers[0].resources).toMatchObject({
        limits: { 'nvidia.com/gpu': '4' },
        requests: { memory: '1Gi' },
      });
      expect(spec.volumes).toContainEqual({
        name: 'vol-scratch',
        emptyDir: { medium: 'Memory', sizeLimit: '1Gi' },
      });
      expect(JSON.stringify(spec.volumes)).toContain('"name":"sflow-artifacts"');
      // the GPU assignment of the summary is filled (the cluster picked the devices)
      const summary = readFileSync(join(run.runDir, 'sflow_summary.log'), 'utf8');
      const gpu = summary.slice(summary.indexOf('GPU Assignment'), summary.indexOf('Node Topology'));
      expect(gpu).not.toContain('n/a (no task requested GPUs)');
      expect(gpu).toMatch(
        /^train\s+g-0,g-1\s+4 per node \(the cluster picks the devices\)\s+4 GPU\(s\) per node on g-0,g-1/m,
      );
      expect(leftovers(k.emu)).toEqual([]);
    });

    it.skipIf(noShared !== undefined && process.env.SFLOW_REQUIRE_SHARED !== '1')(
      `the original's merge_pod_smoke: the merged pod, as sent${noShared ? ` (skipped: ${noShared})` : ''}`,
      async () => {
        const { planned, sent } = await both([sharedPath(SMOKE)], ['-s', 'SERVER_IMAGE=bash:5']);
        expect(sent).toHaveLength(1);
        expect(planned).toEqual(sent);
        expect(String((sent[0].metadata as Obj).name)).toMatch(/^sf-mrg-<HASH>-/);
        expect(leftovers(k.emu)).toEqual([]);
      },
    );
  },
);
