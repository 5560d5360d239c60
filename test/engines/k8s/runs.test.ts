/**
 * Recipes that pass on the local backend pass on the emulator by swapping one backend fragment
 * (test/engines/k8s/fixtures/recipes/backend-{local,k8s}.yaml): a file-passing DAG (through a
 * PVC on Kubernetes), a service with an http readiness probe (checked from the in-cluster probe
 * pod) and its client, replicas and a sequential sweep, GPU tasks packed over two nodes; and a
 * two-node task runs two pods on two nodes. Each run leaves no object of the run in the namespace.
 * The API requests of a run are in its command trace and its summary's command health.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { taskLog } from '../../helpers/run-dir.js';
import { leftovers } from './backend-helpers.js';
import { freePort, required, sandboxMissing } from './harness.js';
import { withEmulator } from './with-emulator.js';
import { runRecipe } from './run-recipe.js';

const HERE = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'recipes');
const missing = sandboxMissing();

describe.skipIf(missing !== undefined && !required)(
  `recipes on local and on the emulator${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const dirs: string[] = [];
    const k = withEmulator(
      missing,
      { nodes: 2, gpus: 4 },
      {
        dirs,
        setup: (k) =>
          k.core.createNamespacedPersistentVolumeClaim({
            namespace: 'default',
            body: {
              metadata: { name: 'sflow-shared' },
              spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Gi' } } },
            },
          }),
      },
    );

    const run = (backend: 'local' | 'k8s', workload: string, extra: string[] = []) =>
      runRecipe(
        backend === 'k8s' ? k : undefined,
        [join(HERE, `backend-${backend}.yaml`), join(HERE, workload)],
        extra,
        dirs,
      );

    const both = (['local', 'k8s'] as const).map((b) => [b] as const);

    /** the External Command Health section of a run's summary */
    const health = (runDir: string): string => {
      const summary = readFileSync(join(runDir, 'sflow_summary.log'), 'utf8');
      const start = summary.indexOf('External Command Health');
      expect(start).toBeGreaterThan(-1);
      return summary.slice(start, summary.indexOf('Command Logs', start));
    };

    it.each(both)('DAG passing files (%s)', async (b) => {
      const r = await run(b, 'dag.yaml', ['-s', `DAG_ID=dag-${b}-${Date.now()}`]);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(r.statuses).toEqual({
        fetch: 'COMPLETED',
        count_words: 'COMPLETED',
        count_lines: 'COMPLETED',
        report: 'COMPLETED',
      });
      // on Kubernetes the log also records the output collect (backends.md §5.5)
      expect(taskLog(r.runDir, 'report')).toMatch(
        b === 'k8s'
          ? /^words=9 lines=3\n\[sflow\] 1 output file\(s\) staged in \S+, awaiting driver copy/
          : /^words=9 lines=3\n$/,
      );
      // the report task's own output file came back to the driver (output collect on Kubernetes)
      expect(readFileSync(join(r.runDir, 'report', 'report.txt'), 'utf8')).toBe('words=9 lines=3\n');
      // a healthy run is reported healthy: sflow's own deletes, 404s and closed streams are not failures
      expect(health(r.runDir)).toMatch(/^Verdict: OK/m);
      if (b === 'k8s') expect(leftovers(k.emu)).toEqual([]);
    });

    it('the API requests are external calls: kube-api in command_trace.jsonl and in the command health', async () => {
      // one request refused (the listing of leftovers of dead drivers, which the run survives):
      // the trace keeps slow or failed calls only, so a healthy run would write none
      k.emu.deny.add('list secrets');
      let r: Awaited<ReturnType<typeof run>>;
      try {
        r = await run('k8s', 'dag.yaml', ['-s', `DAG_ID=dag-trace-${Date.now()}`]);
      } finally {
        k.emu.deny.delete('list secrets');
      }
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(readFileSync(join(r.runDir, 'sflow.log'), 'utf8')).toMatch(
        /could not look for leftovers of earlier runs: secrets is forbidden: User "k8semu" cannot list/,
      );
      const trace = readFileSync(join(r.runDir, 'command_trace.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { tool: string; args: string[]; ok: boolean });
      const api = trace.filter((t) => t.tool === 'kube-api');
      expect(api.map((t) => [t.args.slice(0, 2).join(' '), t.ok])).toContainEqual(['list secrets', false]);
      expect(JSON.stringify(api)).toMatch(/forbidden/);
      const section = health(r.runDir);
      // TOOL CALLS FAILED TIMEOUTS MEAN MAX VERDICT: every request of the run, one of them failed
      const row = /^kube-api\s+(\d+)\s+(\d+)\s+(\d+)\s.*\s(\S+)\s*$/m.exec(section);
      expect(row, section).not.toBeNull();
      expect(Number(row![1])).toBeGreaterThan(10); // creates, watches, logs, deletes of 4 tasks
      expect(row!.slice(2)).toEqual(['1', '0', 'DEGRADED']);
      // the verdict names the one real failure
      expect(section).toMatch(/^Verdict: DEGRADED: 1 of \d+ call\(s\) failed/m);
      expect(section).toMatch(/^ {2}kube-api list secrets.*forbidden/m);
      expect(leftovers(k.emu)).toEqual([]);
    });

    it.each(both)('service with a readiness probe and its client (%s)', async (b) => {
      const port = await freePort();
      const r = await run(b, 'service.yaml', ['-s', `PORT=${port}`]);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(r.statuses).toEqual({ server: 'READY', client: 'COMPLETED' });
      expect(taskLog(r.runDir, 'client')).toBe('client got: hello from the server\n');
      expect(health(r.runDir)).toMatch(/^Verdict: OK/m);
      if (b === 'k8s') {
        const events = readFileSync(join(r.runDir, 'events.jsonl'), 'utf8');
        expect(events).toMatch(/"detail":"HTTP 200 \(via probe pod sf-probe-[0-9a-f]+\)"/);
        expect(leftovers(k.emu)).toEqual([]);
      }
    });

    it.each(both)('replicas and a sequential sweep (%s)', async (b) => {
      const r = await run(b, 'replicas.yaml');
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(Object.values(r.statuses)).toEqual(Array(6).fill('COMPLETED'));
      for (let i = 0; i < 3; i++) expect(taskLog(r.runDir, `shard_${i}`)).toBe(`shard ${i} of 3\n`);
      expect(taskLog(r.runDir, 'sweep_1')).toBe('size=1\n');
      expect(taskLog(r.runDir, 'sweep_2')).toBe('size=2\n');
      if (b === 'k8s') expect(leftovers(k.emu)).toEqual([]);
    });

    it.each(both)('GPU tasks packed over two nodes (%s)', async (b) => {
      const r = await run(b, 'gpus.yaml');
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(r.statuses).toEqual({ a: 'COMPLETED', b: 'COMPLETED', c: 'COMPLETED' });
      const on = (t: string) => taskLog(r.runDir, t).trim().split(' on ')[1];
      expect(on('a')).not.toBe(on('b'));
      expect(on('c')).toBe(on('a'));
      if (b === 'k8s') {
        expect([on('a'), on('b')]).toEqual(['node-0', 'node-1']);
        expect(leftovers(k.emu)).toEqual([]);
      }
    });

    it('a 2-node task runs 2 pods on 2 distinct nodes with their node index, node name, the leader address', async () => {
      const r = await run('k8s', 'multinode.yaml');
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const lines = taskLog(r.runDir, 'train').trim().split('\n').sort();
      expect(lines).toHaveLength(2);
      const parsed = lines.map((l) =>
        /^\[pod\/(\S+)\] index=(\d) leader=(\S+) nodes=2 host=(\S+) name=(\S*) job=(\S*)$/.exec(l),
      );
      expect(parsed.every(Boolean), lines.join('\n')).toBe(true);
      expect(new Set(parsed.map((m) => m![2]))).toEqual(new Set(['0', '1']));
      expect(new Set(parsed.map((m) => m![4]))).toEqual(new Set(['node-0', 'node-1']));
      expect(parsed.map((m) => m![3])).toEqual(['127.10.0.1', '127.10.0.1']);
      // SFLOW_TASK_NODE_NAME: the node each pod runs on (downward API); SFLOW_BACKEND_JOB_ID: the run id
      for (const m of parsed) expect(m![5]).toBe(m![4]);
      expect(parsed.map((m) => m![6])).toEqual([basename(r.runDir), basename(r.runDir)]);
      expect(leftovers(k.emu)).toEqual([]);
    });
  },
);
