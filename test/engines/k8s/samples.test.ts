/**
 * The Kubernetes samples end to end on the API emulator (3 nodes x 4 GPUs; its pods run as local
 * processes on this machine's filesystem), with the image name the samples get by -s known to
 * the emulator as the stand-ins (`images`: test/fixtures/standins mounted at /usr/local in its pods):
 * hello world; Dynamo + TensorRT-LLM disaggregated with both workers as k8s_mpi tasks (the decode
 * worker's 4 ranks over two nodes: its launcher pod plus a worker pod, real sshd and ssh, the
 * stand-in mpirun), the weights from a PVC; and the modular recipe on backends/k8s.yaml (vLLM;
 * Dynamo + TensorRT-LLM disaggregated, engine configs as ConfigMaps, local mpirun in each pod)
 * and on backends/k8s_mpi.yaml (trtllm-serve, one MPI world over two nodes). Readiness gates each
 * client (HTTP probes from the in-cluster probe pod), results are parsed and checked, and no
 * object or process of a run is left.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sflowAsync } from '../../helpers/cli-async.js';
import { onlyRunDir, taskLog, taskTable } from '../../helpers/run-dir.js';
import {
  QUICK_BENCH,
  STANDINS,
  modularFiles,
  modularPortNames,
  portArgs,
  processesOf,
  resultValues,
  sample,
  sets,
  standinsMissing,
  modularServers,
  notReadyBefore,
  standinStateDirs,
  newStandinState,
} from '../../helpers/standins.js';
import { leftovers } from './backend-helpers.js';
import { required, sandboxMissing } from './harness.js';
import { withEmulator } from './with-emulator.js';

const IMAGE = 'sflowtest/standins:emulated';
const missing =
  sandboxMissing() ??
  standinsMissing() ??
  (existsSync('/usr/sbin/sshd') ? undefined : 'no /usr/sbin/sshd (apt-get install openssh-server)');

describe.skipIf(missing !== undefined && !required)(
  `the Kubernetes samples on the emulator, with the stand-ins${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const dirs: string[] = [];
    const k = withEmulator(
      missing,
      // the image: the stand-ins' folder as /usr/local (bin/ on every PATH, lib/ beside it)
      {
        nodes: 3,
        gpus: 4,
        images: { [IMAGE]: { mounts: [{ src: STANDINS, dst: '/usr/local' }], privateTmp: true } },
      },
      {
        dirs,
        setup: (k) =>
          k.core.createNamespacedPersistentVolumeClaim({
            namespace: 'default',
            body: {
              metadata: { name: 'models' },
              spec: { accessModes: ['ReadOnlyMany'], resources: { requests: { storage: '1Gi' } } },
            },
          }),
      },
    );

    /**
     * The built CLI as its own process (bounded: a stuck run is killed and its output shown),
     * against the emulator in this process; success, and nothing of the run left.
     */
    async function run(files: string[], extra: string[]) {
      const cwd = mkdtempSync(join(tmpdir(), 'sflow-k8s-samples-'));
      dirs.push(cwd);
      const args = [
        'run',
        ...files.flatMap((f) => ['-f', f]),
        ...extra,
        '--kubeconfig',
        k.emu.kubeconfigPath,
      ];
      const state = standinStateDirs();
      const r = await sflowAsync(args, {
        cwd,
        env: { SFLOW_K8S_WAIT_HEARTBEAT_SECS: '1' },
        timeoutMs: 200_000,
      });
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const runDir = onlyRunDir(join(cwd, 'sflow_output'));
      expect(leftovers(k.emu)).toEqual([]);
      expect(await processesOf(runDir)).toEqual([]);
      expect(await newStandinState(state)).toEqual([]);
      const statuses = Object.fromEntries(Object.entries(taskTable(runDir)).map(([t, v]) => [t, v.status]));
      return { runDir, statuses };
    }

    it('hello_world: one pod', async () => {
      const r = await run([sample('kubernetes/hello_world')], ['-s', 'NAMESPACE=default']);
      expect(taskLog(r.runDir, 'hello')).toMatch(/^hello from pod \S+$/m);
    });

    it(
      'dynamo_trtllm_disagg: k8s_mpi workers, decode over two nodes, AIPerf once both are READY',
      { timeout: 240_000 },
      async () => {
        const r = await run(
        [sample('kubernetes/dynamo_trtllm_disagg')],
        [
          ...sets({ K8S_NAMESPACE: 'default', NUM_NODES: 3, GPUS_PER_NODE: 2, MODEL_PVC: 'models' }),
          ...sets({ DYNAMO_IMAGE: IMAGE, AIPERF_IMAGE: IMAGE, CTX_TP_SIZE: 1, GEN_TP_SIZE: 4 }),
          ...sets({ ISL: 16, OSL: 8, CONCURRENCY: 2, ROUNDS: 2, PROBE_INTERVAL: 1 }),
          ...(await portArgs('HTTP_PORT', 'ETCD_PORT', 'NATS_PORT', 'PREFILL_SYSTEM_PORT', 'DECODE_SYSTEM_PORT', 'PREFILL_SSH_PORT', 'DECODE_SSH_PORT')),
        ],
      ); // prettier-ignore
        expect(r.statuses).toMatchObject({
          prefill_worker: 'READY',
          decode_worker: 'READY',
          benchmark: 'COMPLETED',
        });
        expect(resultValues(r.runDir, 'benchmark')).toMatchObject({ request_count: 4, errors: 0 });
        expect(notReadyBefore(r.runDir, 'benchmark', ['prefill_worker', 'decode_worker'])).toEqual([]);
        const decode = taskLog(r.runDir, 'decode_worker');
        expect(decode).toMatch(/\[sflow-mpi\] hostfile: 127\.10\.0\.2 slots=2 127\.10\.0\.3 slots=2/);
        expect(decode).toContain('Model registration succeeded: Qwen3-0.6B (decode)');
        expect(decode.match(/rank [123] of 4: MPI worker of rank 0/g)).toHaveLength(3);
        // the decode worker registered with its launcher's node address
        expect(decode).toMatch(/system status server on http:\/\/127\.10\.0\.2:\d+/);
      },
    );

    it('modular on backends/k8s.yaml: vLLM, then Dynamo + TensorRT-LLM disaggregated', { timeout: 240_000 }, async () => {
      const base = [...QUICK_BENCH, ...sets({ K8S_NAMESPACE: 'default', GPUS_PER_NODE: 2, SERVER_IMAGE: IMAGE, CLIENT_IMAGE: IMAGE })];
      const v = await run(modularFiles('k8s', 'vllm_serve'), [...base, '-s', 'SERVER_GPUS=2', ...(await portArgs('HTTP_PORT'))]);
      expect(resultValues(v.runDir, 'benchmark')).toMatchObject({ request_count: 4, errors: 0 });
      expect(notReadyBefore(v.runDir, 'benchmark', ['server'])).toEqual([]);
      const w = 'dynamo_trtllm_disagg';
      const t = await run(modularFiles('k8s', w), [...base, '-s', 'SERVER_GPUS=1', ...(await portArgs(...modularPortNames(w)))]);
      expect(resultValues(t.runDir, 'benchmark')).toMatchObject({ request_count: 4, errors: 0 });
      expect(notReadyBefore(t.runDir, 'benchmark', modularServers(w))).toEqual([]);
      // the engine configuration reached the worker (a ConfigMap); it refuses a missing one
      expect(taskLog(t.runDir, 'decode_server')).toMatch(/rank 0 of 1 runs: python3 -m dynamo\.trtllm .*--extra-engine-args \S+trtllm_decode\.yaml/);
    }); // prettier-ignore

    it(
      'modular on backends/k8s_mpi.yaml: trtllm-serve as one MPI world over two nodes',
      { timeout: 240_000 },
      async () => {
        const r = await run(modularFiles('k8s_mpi', 'trtllm_serve'), [
        ...QUICK_BENCH,
        ...sets({ K8S_NAMESPACE: 'default', NUM_NODES: 2, GPUS_PER_NODE: 2, SERVER_GPUS: 4, SERVER_IMAGE: IMAGE, CLIENT_IMAGE: IMAGE }),
        ...(await portArgs('HTTP_PORT', 'MPI_SSH_PORT')),
      ]); // prettier-ignore
        expect(resultValues(r.runDir, 'benchmark')).toMatchObject({ request_count: 4, errors: 0 });
        const log = taskLog(r.runDir, 'server');
        expect(log).toMatch(/\[sflow-mpi\] hostfile: 127\.10\.0\.\d slots=2 127\.10\.0\.\d slots=2/);
        expect(log).toContain('rank 0 of 4 runs: trtllm-serve /models/Qwen3-0.6B');
        expect(log.match(/rank [123] of 4: MPI worker of rank 0/g)).toHaveLength(3);
      },
    );
  },
);
