/**
 * What a run on Kubernetes records is what happened (issue 30), on the emulator: a task that
 * sleeps 2 s and one that sleeps 0.3 s have the durations and start times the nodes recorded for
 * their containers (the emulator keeps them to the millisecond; its API gives whole seconds, as a
 * real one does) in events.jsonl, the summary and the report; merged-pod members get theirs from
 * their own markers. Collecting outputs is information, not a warning. The dry-run names the pods
 * the run creates (apart from the run's hash).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sflowInProcess } from '../../helpers/cli-inprocess.js';
import {
  expectTimingRun,
  stampedRecord,
  timingWorkflow,
  type EngineRecord,
} from '../../helpers/task-times.js';
import { required, sandboxMissing } from './harness.js';
import { runRecipe } from './run-recipe.js';
import { withEmulator } from './with-emulator.js';
import { readHandleLedger } from '../../../src/events/handle-ledger.js';
import { engineStateOf } from '../../../src/backends/handle-state.js';
import { kubernetesHandleState } from '../../../src/backends/kubernetes/handle-state.js';

const missing = sandboxMissing();

const BACKEND = [
  "version: '0.1'",
  'backends:',
  '  - name: kube',
  '    type: kubernetes',
  '    default: true',
  '    namespace: default',
  '    nodes: 1',
  'operators:',
  '  - name: pod',
  '    type: k8s',
  '    image: bash:5',
  '',
].join('\n');

/** the pod names of each task's first attempt, from the run's handle ledger */
function podsOf(runDir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const h of readHandleLedger(join(runDir, 'handles.jsonl')).all)
    if (h.attempt === 1) out.set(h.task, engineStateOf(kubernetesHandleState, h).pods);
  return out;
}

describe.skipIf(missing !== undefined && !required)(
  `task times and names on the emulator${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const dirs: string[] = [];
    const k = withEmulator(missing, { nodes: 1, gpus: 4 }, { dirs });

    /** a scratch folder with the given files; their paths in the same order */
    const files = (...texts: Array<[string, string]>): string[] => {
      const dir = mkdtempSync(join(tmpdir(), 'sflow-k8s-times-'));
      dirs.push(dir);
      return texts.map(([name, text]) => {
        writeFileSync(join(dir, name), text);
        return join(dir, name);
      });
    };

    it('a 2 s and a 0.3 s task: durations and Gantt starts as the node recorded them', async () => {
      const r = await runRecipe(
        k,
        files(['t.yaml', timingWorkflow('k8stimes', { operator: 'pod' })], ['b.yaml', BACKEND]),
        [],
        dirs,
      );
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const pods = podsOf(r.runDir);
      const engine = (task: string): EngineRecord => {
        const pod = pods.get(task)?.[0];
        const c = k.emu.containerTimes().find((x) => x.pod === pod && x.container === 'main');
        expect(c?.finishedAt, `${task}: the emulator's record of ${pod}`).toBeTypeOf('number');
        return { start: c!.startedAt, end: c!.finishedAt! };
      };
      expectTimingRun(r.runDir, { two: engine('two'), short: engine('short') });
    });

    it("merged-pod members: each member's own start and exit markers give its times", async () => {
      const member = (name: string, secs: string, dep?: string) => [
        `    - name: ${name}`,
        '      operator: pod',
        ...(dep ? [`      depends_on: [${dep}]`] : []),
        '      resources: {gpus: {count: 1}}',
        // the member's own clock at its first and last line: the reference
        `      script: ['echo "t0=$(date +%s.%N)"; sleep ${secs}; echo "t1=$(date +%s.%N)"']`,
      ];
      const wf = [
        "version: '0.1'",
        'workflow:',
        '  name: k8smerged',
        '  tasks:',
        ...member('two', '2'),
        ...member('short', '0.3', 'two'),
        '',
      ];
      const be = BACKEND.replace(
        '    nodes: 1',
        "    nodes: 1\n    gpus_per_node: 4\n    merge_colocated_gpu_pods: 'on'",
      );
      const r = await runRecipe(k, files(['t.yaml', wf.join('\n')], ['b.yaml', be]), [], dirs);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(readFileSync(join(r.runDir, 'sflow_summary.log'), 'utf8')).toMatch(
        /short\s+SUBMITTED\s+attempt=1 gated_on=two/,
      );
      // the members' own clocks (their scripts' first and last lines) are the reference
      expectTimingRun(r.runDir, {
        two: stampedRecord(r.runDir, 'two'),
        short: stampedRecord(r.runDir, 'short'),
      });
    });

    it("collecting a task's outputs is information, not a warning", async () => {
      const wf = [
        "version: '0.1'",
        'workflow:',
        '  name: k8scollect',
        '  tasks:',
        '    - name: make',
        '      operator: pod',
        '      script: ["echo hi > $SFLOW_TASK_OUTPUT_DIR/out.txt"]',
        '',
      ].join('\n');
      const r = await runRecipe(k, files(['t.yaml', wf], ['b.yaml', BACKEND]), [], dirs);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(readFileSync(join(r.runDir, 'make', 'out.txt'), 'utf8')).toBe('hi\n');
      const out = r.stdout + r.stderr;
      expect(out).toMatch(/^ℹ Task 'make': collected 1 file\(s\) from pod \S+/m);
      expect(out).not.toContain('⚠');
      const logs = readFileSync(join(r.runDir, 'events.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"type":"log"'))
        .map((l) => JSON.parse(l) as { level: string; message: string });
      expect(logs.find((e) => e.message.includes('collected 1 file(s)'))?.level).toBe('info');
      expect(logs.filter((e) => e.level === 'warning')).toEqual([]);
    });

    it('the dry-run names the pods the run creates (the run hash masked)', async () => {
      const [wf, be] = files(
        ['t.yaml', timingWorkflow('k8snames', { operator: 'pod' })],
        ['b.yaml', BACKEND],
      );
      const dry = await sflowInProcess(['run', '-f', wf, '-f', be, '--dry-run'], {
        cwd: dirs[dirs.length - 1],
      });
      expect(dry.code, dry.stderr).toBe(0);
      const r = await runRecipe(k, [wf, be], [], dirs);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const mask = (s: string) => s.replace(/-[0-9a-f]{8}-a/g, '-<hash>-a');
      const ran = podsOf(r.runDir);
      expect([...ran.keys()].sort()).toEqual(['short', 'two']);
      for (const [task, pods] of ran) {
        const block = dry.stdout.slice(dry.stdout.indexOf(`] ${task}\n`));
        const planned = /^\s+pods: (.+)$/m.exec(block)?.[1];
        expect(mask(planned ?? '(none printed)'), task).toBe(mask(pods.join(', ')));
      }
    });
  },
);
