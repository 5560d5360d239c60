/**
 * The `k8s_mpi` pods route, field by field (test/fixtures/k8s-manifests/k8s_mpi_pods.json;
 * `SFLOW_UPDATE_GOLDEN=1` rewrites it): a launcher pod and a worker pod pinned to the two nodes,
 * the SSH key only in the env Secret, OMP_NUM_THREADS injected, the MPI emptyDir, worker.sh for
 * workers; and the generated scripts are valid bash that write the hostfile and the mpirun flags
 * the settings ask for (run with a stub mpirun: test/engines/k8s/mpi.test.ts runs them on pods).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { backendCatalog } from '../../../src/backends/registry.js';
import { runNames } from '../../../src/backends/kubernetes/names.js';
import { mpiSettings, workerScript } from '../../../src/backends/kubernetes/mpi-pods.js';
import { launcherScript, mpirunShim } from '../../../src/backends/kubernetes/mpi-launcher.js';
import { k8sSettings } from '../../../src/backends/kubernetes/settings.js';
import { prepareTaskPods } from '../../../src/backends/kubernetes/task-pods.js';
import { buildMpiJob } from '../../../src/backends/kubernetes/mpijob.js';
import { backendOfType, operatorOfType } from '../../helpers/backends.js';
import { loadRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const RECIPE = join(HERE, '..', '..', 'fixtures', 'k8s-mpi', 'mpi-pods.yaml');
const GOLDEN = join(HERE, '..', '..', 'fixtures', 'k8s-manifests', 'k8s_mpi_pods.json');
const GOLDEN_JOB = join(HERE, '..', '..', 'fixtures', 'k8s-manifests', 'k8s_mpi_mpijob.json');
const KEY = Buffer.from(
  '-----BEGIN EC PRIVATE KEY-----\nfixed-for-golden\n-----END EC PRIVATE KEY-----\n',
).toString('base64');
const tmp = mkdtempSync(join(tmpdir(), 'sflow-mpi-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function prepared(passEnvs = true) {
  const loaded = loadRecipe({ files: [RECIPE], set: [], artifacts: [], missable: [] });
  const plan = buildPlan(loaded, {
    dryRun: true,
    runId: 'golden-20261201-000000-000000',
    workspaceDir: '/work/golden',
    catalog: backendCatalog,
  });
  const b = backendOfType(plan.backends[0], 'kubernetes');
  const settings = k8sSettings(b);
  const run = runNames('golden-20261201-000000-000000');
  const r = { settings, run, backend: b.name, api: { namespace: settings.namespace }, log: () => undefined };
  const manifest = {
    settings,
    run,
    backend: b.name,
    namespace: settings.namespace,
    driver: 'driver-host:1:0',
  };
  const t = plan.tasks[0];
  if (!passEnvs) operatorOfType(t.operator, 'k8s_mpi').config.pass_envs = false;
  return prepareTaskPods(
    {
      r,
      manifest,
      rdma: { hcas: [], gkeNetworks: [] },
      channel: undefined,
      mpiKey: () => KEY,
    },
    { task: t, attempt: 1, specs: t.launch },
    undefined,
  );
}

describe('k8s_mpi pods route manifests', () => {
  it('matches the golden manifests field by field', () => {
    const p = prepared();
    const text = `${JSON.stringify(p, null, 2)}\n`;
    if (process.env.SFLOW_UPDATE_GOLDEN === '1') writeFileSync(GOLDEN, text);
    expect(existsSync(GOLDEN), `${GOLDEN} (SFLOW_UPDATE_GOLDEN=1 records it)`).toBe(true);
    expect(JSON.parse(text)).toEqual(JSON.parse(readFileSync(GOLDEN, 'utf8')));
  });

  it('MPIJob route: the MPIJob matches its golden manifest, field by field', () => {
    const p = prepared();
    const m = mpiSettings({
      mpi: { slots_per_worker: 4, launcher_creation_policy: 'AtStartup', worker_setup_timeout_seconds: 62 },
    });
    const labels = { ...p.pods[0].metadata!.labels! };
    delete labels['sflow/node-index'];
    const job = buildMpiJob(
      'sf-allreduce-707ac110-a1',
      'team-a',
      labels,
      { 'sflow/run-id': 'r' },
      {
        pods: p.pods,
        settings: m,
        slots: 4,
        launcherCreationPolicy: m.launcherCreationPolicy,
      },
    ) as any;
    const text = `${JSON.stringify(job, null, 2)}\n`;
    if (process.env.SFLOW_UPDATE_GOLDEN === '1') writeFileSync(GOLDEN_JOB, text);
    expect(existsSync(GOLDEN_JOB), `${GOLDEN_JOB} (SFLOW_UPDATE_GOLDEN=1 records it)`).toBe(true);
    expect(JSON.parse(text)).toEqual(JSON.parse(readFileSync(GOLDEN_JOB, 'utf8')));
    expect(job.apiVersion).toBe('kubeflow.org/v2beta1');
    expect(job.kind).toBe('MPIJob');
    expect(job.metadata.labels).toMatchObject({
      'sflow/run': 'golden-20261201-000000-000000',
      'sflow/task': 'allreduce',
      'sflow/attempt': '1',
    });
    expect(job.spec).toMatchObject({
      slotsPerWorker: 4,
      runLauncherAsWorker: true,
      mpiImplementation: 'OpenMPI',
      launcherCreationPolicy: 'AtStartup',
      runPolicy: { cleanPodPolicy: 'Running' },
    });
    const { Launcher, Worker } = job.spec.mpiReplicaSpecs;
    expect([Launcher.replicas, Worker.replicas]).toEqual([1, 1]);
    // the templates are the pods route's pods: same container, env Secret, script ConfigMap, labels
    expect(Launcher.template.spec).toEqual(p.pods[0].spec);
    expect(Launcher.template.metadata.labels).toEqual(p.pods[0].metadata!.labels);
    const w = Worker.template.spec;
    const c = w.containers[0];
    expect(c.command.at(-1)).toBe('/sflow/run/worker.sh');
    expect(c.envFrom).toEqual([{ secretRef: { name: 'sf-allreduce-707ac110-a1-env' } }]);
    expect(w.volumes).toContainEqual({
      name: 'sflow-run',
      configMap: { name: 'sf-allreduce-707ac110-a1-script', defaultMode: 493 },
    });
    expect(w.nodeSelector).toBeUndefined();
    expect(w.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['cluster-node1'] }] },
    ]);
    expect(w.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]).toEqual({
      labelSelector: {
        matchLabels: {
          'training.kubeflow.org/job-name': 'sf-allreduce-707ac110-a1',
          'training.kubeflow.org/job-role': 'worker',
        },
      },
      topologyKey: 'kubernetes.io/hostname',
    });
    // the template serves every worker: only values each pod resolves itself (its node, its IP)
    expect(c.env).toEqual([
      { name: 'SFLOW_TASK_NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
      { name: 'SFLOW_MPI_LISTEN_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
    ]);
    expect(c.readinessProbe).toEqual({ tcpSocket: { port: 2222 }, periodSeconds: 5, failureThreshold: 13 });
    expect(JSON.stringify(job)).not.toContain(KEY);
    // without launcher_creation_policy the field is left to the operator's default
    const plain = buildMpiJob(
      'j',
      'team-a',
      labels,
      {},
      { pods: p.pods, settings: m, slots: 4, launcherCreationPolicy: undefined },
    ) as any;
    expect('launcherCreationPolicy' in plain.spec).toBe(false);
  });

  it('a launcher and a worker, pinned, with the key only in the Secret', () => {
    const p = prepared();
    expect(p.pods.map((x) => x.metadata!.labels!['sflow/role'])).toEqual(['mpi-launcher', 'mpi-worker']);
    expect(p.pods.map((x) => x.spec!.nodeSelector!['kubernetes.io/hostname'])).toEqual([
      'cluster-node0',
      'cluster-node1',
    ]);
    expect(p.pods[0].spec!.containers[0].command!.at(-1)).toBe('/sflow/run/task.sh');
    expect(p.pods[1].spec!.containers[0].command!.at(-1)).toBe('/sflow/run/worker.sh');
    expect(p.pods[1].spec!.containers[0].ports).toContainEqual({ name: 'sshd', containerPort: 2222 });
    for (const pod of p.pods) {
      expect(pod.spec!.volumes).toContainEqual({ name: 'sflow-mpi', emptyDir: {} });
      expect(pod.spec!.containers[0].volumeMounts).toContainEqual({
        name: 'sflow-mpi',
        mountPath: '/sflow/mpi',
      });
      expect(pod.spec!.containers[0].resources!.limits).toMatchObject({ 'nvidia.com/gpu': '4' });
      expect(JSON.stringify(pod)).not.toContain(KEY);
    }
    expect(p.secret!.stringData).toMatchObject({ SFLOW_MPI_SSH_KEY_B64: KEY, OMP_NUM_THREADS: '2' });
    expect(JSON.stringify(p.configMap)).not.toContain(KEY);
    expect(p.collect).toBe(false);
  });

  it("pass_envs: false still ships the key, the node addresses and each pod's node index and name", () => {
    const p = prepared(false);
    expect(Object.keys(p.secret!.stringData!).sort()).toEqual([
      'OMP_NUM_THREADS',
      'SFLOW_MPI_SSH_KEY_B64',
      'SFLOW_TASK_ASSIGNED_NODE_IPS',
    ]);
    expect(p.pods[1].spec!.containers[0].env).toEqual([
      { name: 'SFLOW_TASK_NODE_INDEX', value: '1' },
      { name: 'SFLOW_TASK_NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
    ]);
  });

  it('the scripts are valid bash; the shim passes hostfile, transport, binding and -x to mpirun', () => {
    const m = mpiSettings({
      mpi: { slots_per_worker: 4, cpu_bind_cores_per_rank: 6, forward_env_prefixes: ['MY_'] },
    });
    for (const [name, text] of [
      ['task.sh', launcherScript(m, 4, 'mpirun -np 8 hostname')],
      ['worker.sh', workerScript(m)],
    ] as const) {
      const f = join(tmp, name);
      writeFileSync(f, text);
      const r = spawnSync('bash', ['-n', f], { encoding: 'utf8' });
      expect(r.status, `${name}: ${r.stderr}`).toBe(0);
    }
    // the shim against a stub mpirun that prints its arguments, one per line
    const d = join(tmp, 'shim');
    spawnSync('mkdir', ['-p', d]);
    writeFileSync(join(d, 'real-mpirun'), '#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n', { mode: 0o755 });
    writeFileSync(join(d, 'workers'), '');
    // 48 cores in the pod's cpuset: 4 ranks get min(48 / 4, 6) = 6 cores each
    writeFileSync(join(d, 'nproc'), '#!/bin/sh\necho 48\n', { mode: 0o755 });
    const shim = mpirunShim(m, 4).replace('__d=/sflow/mpi', `__d=${d}`);
    writeFileSync(join(d, 'mpirun'), shim, { mode: 0o755 });
    const r = spawnSync(join(d, 'mpirun'), ['-np', '8', 'hostname'], {
      encoding: 'utf8',
      env: {
        PATH: `${d}:${process.env.PATH}`,
        SFLOW_MPI_REAL_MPIRUN: join(d, 'real-mpirun'),
        MY_X: '1',
        OMP_NUM_THREADS: '2',
        SFLOW_MPI_SSH_KEY_B64: 'k',
      },
    });
    expect(r.status, r.stderr).toBe(0);
    const args = r.stdout.trim().split('\n');
    expect(args.slice(0, 2)).toEqual(['--hostfile', `${d}/hostfile`]);
    expect(args).toContain('plm_rsh_args');
    expect(args.join(' ')).toContain('-p 2222 -i /sflow/mpi/ssh/id -o StrictHostKeyChecking=no');
    expect(args.join(' ')).toContain('--map-by slot:PE=6 --bind-to core');
    for (const v of ['PATH', 'OMP_NUM_THREADS', 'MY_X']) expect(args.join(' ')).toContain(`-x ${v}`);
    expect(args.join(' ')).not.toContain('SFLOW_MPI_SSH_KEY_B64');
    expect(args.slice(-3)).toEqual(['-np', '8', 'hostname']);
    // a binding in the command itself is left alone
    const own = spawnSync(join(d, 'mpirun'), ['--bind-to', 'none', 'hostname'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, SFLOW_MPI_REAL_MPIRUN: join(d, 'real-mpirun') },
    });
    expect(own.stdout).not.toContain('--map-by');
  });
  it.each([
    ['MPICH', ['-f', 'HOSTFILE', '-launcher', 'ssh', '-launcher-exec', 'SSH', '-bind-to', 'core:6']],
    [
      'Intel',
      [
        '-machinefile',
        'HOSTFILE',
        '-bootstrap',
        'ssh',
        '-bootstrap-exec',
        'SSH',
        '-genv',
        'I_MPI_PIN_DOMAIN',
        '6',
      ],
    ],
  ])(
    '%s (Hydra): hostfile host:N, the ssh launcher program, -genvlist, binding unless the command pins',
    (impl, opts) => {
      const m = mpiSettings({
        mpi: {
          mpi_implementation: impl,
          slots_per_worker: 4,
          cpu_bind_cores_per_rank: 6,
          forward_env_prefixes: ['MY_'],
        },
      });
      const script = launcherScript(m, 4, 'mpiexec -n 8 hostname');
      const f = join(tmp, `task-${impl}.sh`);
      writeFileSync(f, script);
      expect(spawnSync('bash', ['-n', f], { encoding: 'utf8' }).status).toBe(0);
      expect(script).toContain('do echo "$__ip:4"; done > "$__sflow_mpi/hostfile"');
      expect(script).toContain('exec ssh -p 2222 -i /sflow/mpi/ssh/id -o StrictHostKeyChecking=no');
      expect(script).toContain('ln -sf mpirun "$__sflow_mpi/bin/mpiexec"');
      const d = join(tmp, `shim-${impl}`);
      spawnSync('mkdir', ['-p', d]);
      writeFileSync(join(d, 'real'), '#!/bin/sh\nprintf \'%s\\n\' "$@"\n', { mode: 0o755 });
      writeFileSync(join(d, 'workers'), '');
      writeFileSync(join(d, 'nproc'), '#!/bin/sh\necho 48\n', { mode: 0o755 });
      writeFileSync(join(d, 'mpiexec'), mpirunShim(m, 4).replace('__d=/sflow/mpi', `__d=${d}`), {
        mode: 0o755,
      });
      const call = (args: string[], env: Record<string, string> = {}) =>
        spawnSync(join(d, 'mpiexec'), args, {
          encoding: 'utf8',
          env: { PATH: `${d}:${process.env.PATH}`, SFLOW_MPI_REAL_MPIRUN: join(d, 'real'), ...env },
        });
      const r = call(['-n', '8', 'hostname'], {
        MY_X: '1',
        OMP_NUM_THREADS: '2',
        SFLOW_MPI_SSH_KEY_B64: 'k',
      });
      expect(r.status, r.stderr).toBe(0);
      const args = r.stdout.trim().split('\n');
      expect(args.slice(0, opts.length)).toEqual(
        opts.map((o) => (o === 'HOSTFILE' ? `${d}/hostfile` : o === 'SSH' ? `${d}/bin/sflow-mpi-ssh` : o)),
      );
      const list = args[args.indexOf('-genvlist') + 1].split(',');
      expect(list).toEqual(expect.arrayContaining(['PATH', 'OMP_NUM_THREADS', 'MY_X']));
      expect(list).not.toContain('SFLOW_MPI_SSH_KEY_B64');
      expect(args.slice(-3)).toEqual(['-n', '8', 'hostname']);
      expect(r.stderr).toContain('[sflow-mpi] launch: mpiexec ');
      // a binding of the command's own (or Intel's pinning in the environment) is left alone
      const own = call(
        impl === 'MPICH'
          ? ['-bind-to', 'none', 'hostname']
          : ['-genv', 'I_MPI_PIN_DOMAIN', 'auto', 'hostname'],
      );
      expect(own.stdout.split('\n').filter((a) => a === 'core:6' || a === '6')).toEqual([]);
      if (impl === 'Intel')
        expect(call(['hostname'], { I_MPI_PIN_DOMAIN: 'omp' }).stdout).not.toContain('I_MPI_PIN_DOMAIN');
    },
  );
});
