/**
 * `k8s_mpi` on the pods route, end to end on the emulator (its pods run as local processes in
 * their own namespaces): the worker pod's real sshd takes the attempt's key, the launcher's shim
 * waits for it, writes the hostfile and the ssh transport, and a stand-in mpirun
 * (fixtures/fake-mpirun.sh: no MPI is installed here) starts 4 ranks over real ssh — 2 on the
 * launcher's node, 2 on the worker's — with the forwarded env. The workers exit 0 once the
 * launcher is done; a failing rank fails the task; nothing of the run is left in the namespace.
 * The same recipe on the MPIJob route (`route: auto` with the CRD served, the emulator's minimal
 * mpi-operator making the worker and launcher pods): the launcher pod is found by its labels, its
 * log is the task log, its exit code the task's, and the MPIJob with everything it owns is gone
 * after success, failure and Ctrl-C. `route: operator` where the CRD is missing is refused before
 * any object of the task is made.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { taskLog, taskTable } from '../../helpers/run-dir.js';
import { leftovers } from './backend-helpers.js';
import { freePort, required, sandboxMissing, startK8s } from './harness.js';
import { withEmulator } from './with-emulator.js';
import { runRecipe } from './run-recipe.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const RECIPE = join(HERE, 'fixtures', 'recipes', 'mpi.yaml');
const FAKE = join(HERE, 'fixtures', 'fake-mpirun.sh');
const HYDRA = join(HERE, 'fixtures', 'fake-mpirun-hydra.sh');
const missing =
  sandboxMissing() ??
  (existsSync('/usr/sbin/sshd') ? undefined : 'no /usr/sbin/sshd (apt-get install openssh-server)');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe.skipIf(missing !== undefined && !required)(
  `k8s_mpi pods route on the emulator${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const dirs: string[] = [];
    const k = withEmulator(missing, { nodes: 2, gpus: 4, mpiJob: true }, { dirs });

    const run = async (extra: string[], on = k, fake = FAKE) =>
      runRecipe(
        on,
        [RECIPE],
        ['-s', `FAKE_MPIRUN=${fake}`, '-s', `MPI_PORT=${await freePort()}`, ...extra],
        dirs,
      );
    /** rank, host, OMP_NUM_THREADS, the forwarded MY_FLAG and the launch style each rank printed */
    const ranksOf = (log: string) =>
      [...log.matchAll(/rank=(\d)\/4 host=(\S+) omp=(\S*) flag=(\S*) style=(\S+)$/gm)]
        .map((m) => m.slice(1))
        .sort();
    const fourRanks = (style: string) =>
      ['0', '1', '2', '3'].map((r) => [r, r < '2' ? 'node-0' : 'node-1', '3', 'forwarded', style]);

    it('4 ranks over ssh on 2 nodes; the worker exits 0 after the launcher; nothing left', async () => {
      const r = await run(['-s', 'ROUTE=pods']);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(r.statuses).toEqual({ ranks: 'COMPLETED' });
      const log = taskLog(r.runDir, 'ranks');
      expect(ranksOf(log), log).toEqual(fourRanks('openmpi'));
      expect(log).toMatch(/\[sflow-mpi\] hostfile: 127\.10\.0\.1 slots=2 127\.10\.0\.2 slots=2/);
      expect(log).toMatch(/\[sflow-mpi\] worker 1: sshd on 127\.10\.0\.2:\d+/);
      expect(log).toContain('[sflow-mpi] worker 1: the launcher is done');
      expect(log).toContain('after mpirun');
      expect(k.emu.requests().filter((q) => q.method === 'POST' && q.path.includes('/mpijobs'))).toEqual([]);
      // the attempt's SSH key (PEM, base64 in the env Secret) is in no file of the run and in no
      // request but the Secret's own (the emulator's log redacts Secret payloads)
      const PEM_B64 = Buffer.from('-----BEGIN EC PRIVATE KEY-----').toString('base64').slice(0, 36);
      expect(
        filesUnder(r.runDir).filter((f) =>
          /PRIVATE KEY|LS0tLS1CRUdJTiBFQyBQUklWQVRF/.test(readFileSync(f, 'latin1')),
        ),
      ).toEqual([]);
      expect(readFileSync(k.emu.requestLogPath, 'utf8')).not.toContain(PEM_B64);
      expect(leftovers(k.emu)).toEqual([]);
    });

    it('a failing rank on the worker fails the task with its exit code; nothing left', async () => {
      const r = await run(['-s', 'FAIL=5', '-s', 'ROUTE=pods']);
      expect(r.code, r.stderr + r.stdout).not.toBe(0);
      expect(taskTable(r.runDir).ranks).toMatchObject({ status: 'FAILED', exit: '5' });
      expect(taskLog(r.runDir, 'ranks')).not.toContain('after mpirun');
      expect(leftovers(k.emu)).toEqual([]);
    });

    const owned = () =>
      ['pods', 'configmaps', 'secrets'].flatMap((kind) =>
        (
          k.emu.store.list(kind, 'default') as Array<{
            metadata: { name: string; ownerReferences?: unknown[] };
          }>
        )
          .filter((o) => o.metadata.ownerReferences?.length)
          .map((o) => `${kind}/${o.metadata.name}`),
      );

    it('MPIJob route (auto, CRD served): the operator makes the pods, the launcher log is the task log; nothing left', async () => {
      const r = await run([]);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(r.statuses).toEqual({ ranks: 'COMPLETED' });
      const log = taskLog(r.runDir, 'ranks');
      expect(ranksOf(log), log).toEqual(fourRanks('openmpi'));
      expect(log).toMatch(/\[sflow-mpi\] hostfile: 127\.10\.0\.1 slots=2 127\.10\.0\.2 slots=2/);
      expect(log).toContain('after mpirun');
      // the launcher pod's log alone: the worker's sshd lines are not in the task log
      expect(log).not.toContain('sshd on');
      const posts = k.emu.requests().filter((q) => q.method === 'POST' && q.path.includes('/mpijobs'));
      expect(posts.length).toBeGreaterThan(0);
      expect(leftovers(k.emu)).toEqual([]);
      expect(owned()).toEqual([]);
    });

    it('MPIJob route: a failing rank fails the task with its exit code; nothing left', async () => {
      const r = await run(['-s', 'FAIL=7']);
      expect(r.code, r.stderr + r.stdout).not.toBe(0);
      expect(taskTable(r.runDir).ranks).toMatchObject({ status: 'FAILED', exit: '7' });
      expect(taskLog(r.runDir, 'ranks')).not.toContain('after mpirun');
      expect(leftovers(k.emu)).toEqual([]);
      expect(owned()).toEqual([]);
    });

    it.each([
      [
        'MPICH',
        'pods',
        'mpiexec',
        /launch: mpiexec -f \/sflow\/mpi\/hostfile -launcher ssh -launcher-exec \/sflow\/mpi\/bin\/sflow-mpi-ssh -bind-to core:\d+ -genvlist PATH,/,
      ],
      [
        'Intel',
        'auto',
        'mpirun',
        /launch: mpirun -machinefile \/sflow\/mpi\/hostfile -bootstrap ssh -bootstrap-exec \/sflow\/mpi\/bin\/sflow-mpi-ssh -genv I_MPI_PIN_DOMAIN \d+ -genvlist PATH,/,
      ],
    ])(
      '%s launch style (route %s, `%s`): Hydra hostfile, ssh launcher program, -genvlist; 4 ranks over ssh; nothing left',
      async (mpi, route, launch, line) => {
        const r = await run(['-s', `MPI=${mpi}`, '-s', `ROUTE=${route}`, '-s', `LAUNCH=${launch}`], k, HYDRA);
        expect(r.code, r.stderr + r.stdout).toBe(0);
        const log = taskLog(r.runDir, 'ranks');
        expect(ranksOf(log), log).toEqual(fourRanks(mpi === 'MPICH' ? 'mpich' : 'intel'));
        expect(log).toMatch(/\[sflow-mpi\] hostfile: 127\.10\.0\.1:2 127\.10\.0\.2:2/);
        expect(log).toMatch(line);
        expect(log).toMatch(/-genvlist PATH,OMP_NUM_THREADS,\S*MY_FLAG/); // LD_LIBRARY_PATH: unset in the pod
        expect(log).toContain('after mpirun');
        const made = k.emu.requests().filter((q) => q.method === 'POST' && q.path.includes('/mpijobs'));
        if (route === 'auto')
          expect(
            made.some((q) => JSON.stringify(q.body ?? '').includes(`"mpiImplementation":"${mpi}"`)),
          ).toBe(true);
        expect(leftovers(k.emu)).toEqual([]);
      },
    );

    it('route: operator without the CRD is refused before any object of the task is made', async () => {
      const bare = await startK8s({ nodes: 2, gpus: 4 });
      try {
        const r = await run(['-s', 'ROUTE=operator'], bare);
        expect(r.code).not.toBe(0);
        expect(r.stderr + r.stdout).toMatch(/mpi\.route: operator needs the Kubeflow MPI operator/);
        const made = bare.emu
          .requests()
          .filter((q) => q.method === 'POST' && /\/(configmaps|secrets|mpijobs)$/.test(q.path));
        expect(made.filter((q) => !q.path.includes('sf-art-'))).toEqual([]);
        expect(leftovers(bare.emu)).toEqual([]);
      } finally {
        await bare.emu.stop();
      }
    });
  },
);
