/**
 * Nothing of a run is left in the namespace (issue 12) — task pods, merged pods, k8s_mpi launcher
 * and worker pods (pods route; MPIJob route: the MPIJob and what the emulator's mpi-operator made
 * for it), ConfigMaps, Secrets: after Ctrl-C or SIGTERM, a failing task, and after a SIGKILLed
 * driver once `sflow recover <run dir>` ran. Every run carries a token in its
 * env Secret; it appears in no file of the run directory and in no request the emulator logged
 * (the log redacts Secret payloads, so a hit is a leak through a pod spec, a ConfigMap, an argv).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onlyRunDir, taskLog, taskTable } from '../../helpers/run-dir.js';
import { leftovers } from './backend-helpers.js';
import { required, sandboxMissing, startK8s, waitFor, type K8s } from './harness.js';
import { runRecipe } from './run-recipe.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const RECIPE = join(HERE, 'fixtures', 'recipes', 'lifecycle.yaml');
const CLI = join(HERE, 'fixtures', 'sflow-cli.ts');
const LOADER = join(HERE, '..', '..', 'fixtures', 'ts-loader', 'register.js');
const missing = sandboxMissing();
const FAKE_MPIRUN = join(HERE, 'fixtures', 'fake-mpirun.sh');

/** the k8s_mpi task's stand-in mpirun and a free port for its worker's sshd */
function mpiArgs(): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '0.0.0.0', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(['-s', `FAKE_MPIRUN=${FAKE_MPIRUN}`, '-s', `MPI_PORT=${port}`]));
    });
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe.skipIf(missing !== undefined && !required)(
  `a run leaves nothing in the namespace${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let k: K8s;
    const dirs: string[] = [];
    const children: ChildProcess[] = [];
    beforeAll(async () => {
      if (missing) throw new Error(missing);
      k = await startK8s({ nodes: 2, gpus: 4, mpiJob: true });
    });
    afterAll(async () => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await k?.emu.stop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    const token = () => `tok-${randomBytes(12).toString('hex')}`;

    /**
     * No file of the run directory, event, pod spec or request holds the token — not even
     * `--resume`'s record of the command line: API_TOKEN is a secret variable (its name), recorded
     * as a placeholder.
     */
    function expectNoLeak(runDir: string, secret: string) {
      const hits = filesUnder(runDir).filter((f) => readFileSync(f, 'latin1').includes(secret));
      expect(hits).toEqual([]);
      expect(readFileSync(k.emu.requestLogPath, 'utf8')).not.toContain(secret);
    }

    /** the CLI as a child process, once every long-running pod of its run is Running */
    async function startRun(secret: string, route = 'pods') {
      const cwd = mkdtempSync(join(tmpdir(), 'sflow-k8s-life-'));
      dirs.push(cwd);
      const args = [
        'run',
        '-f',
        RECIPE,
        '-s',
        `API_TOKEN=${secret}`,
        ...(await mpiArgs()),
        '-s',
        `MPI_ROUTE=${route}`,
        '--kubeconfig',
        k.emu.kubeconfigPath,
      ];
      const child = spawn(process.execPath, ['--import', LOADER, CLI, ...args], {
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NO_COLOR: '1' },
      });
      children.push(child);
      let out = '';
      child.stdout.on('data', (d) => (out += String(d)));
      child.stderr.on('data', (d) => (out += String(d)));
      const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
      const running = () =>
        (
          k.emu.store.list('pods', 'default') as Array<{
            metadata: { labels?: Record<string, string> };
            status?: { phase?: string };
          }>
        )
          .filter((p) =>
            ['task', 'merged', 'mpi-launcher', 'mpi-worker'].includes(
              p.metadata.labels?.['sflow/role'] ?? '',
            ),
          )
          .filter((p) => p.status?.phase === 'Running').length;
      // server, spread on 2 nodes, the merged pod of gpu_a + gpu_b, the MPI launcher and worker
      await waitFor(
        `the run's 6 long-running pods (output so far: ${out})`,
        () => running() >= 6 || undefined,
        90_000,
      );
      return { child, exited, cwd, out: () => out };
    }

    /** what the emulator's mpi-operator made for an MPIJob (owned by it, not labelled by sflow) */
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

    it.each([
      ['Ctrl-C', 130, 'SIGINT', 'pods'],
      ['SIGTERM', 143, 'SIGTERM', 'pods'],
      ['Ctrl-C (k8s_mpi MPIJob route)', 130, 'SIGINT', 'operator'],
    ] as const)(
      '%s: the driver deletes every object of the run, exits %i',
      async (_what, exit, sig, route) => {
        const secret = token();
        const r = await startRun(secret, route);
        expect(leftovers(k.emu).length).toBeGreaterThan(0);
        if (route === 'operator')
          expect(leftovers(k.emu).filter((o) => o.startsWith('mpijobs'))).toHaveLength(1);
        r.child.kill(sig);
        const code = await r.exited;
        expect(code, r.out()).toBe(exit);
        expect(leftovers(k.emu)).toEqual([]);
        await waitFor('the MPIJob-owned objects to go', () => owned().length === 0 || undefined);
        const runDir = onlyRunDir(join(r.cwd, 'sflow_output'));
        expect(taskLog(runDir, 'server')).toBe(`token has ${secret.length} chars\nSERVING\n`);
        expectNoLeak(runDir, secret);
      },
    );

    /** `sflow recover <run dir>` as its own process */
    async function recover(runDir: string, cwd: string) {
      const rec = spawn(process.execPath, ['--import', LOADER, CLI, 'recover', runDir], {
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(rec);
      let out = '';
      rec.stdout.on('data', (d) => (out += String(d)));
      rec.stderr.on('data', (d) => (out += String(d)));
      const code = await new Promise<number | null>((res) => rec.once('exit', (c) => res(c)));
      return { code, out };
    }

    it.each(['pods', 'operator'])(
      'a SIGKILLed driver leaves its objects; `sflow recover <run dir>` deletes them (not while it lives; k8s_mpi route %s)',
      async (route) => {
        const secret = token();
        const r = await startRun(secret, route);
        const runDir = onlyRunDir(join(r.cwd, 'sflow_output'));
        const alive = await recover(runDir, r.cwd);
        expect(alive.code, alive.out).not.toBe(0);
        expect(alive.out).toMatch(/driver still runs \(pid \d+/);
        r.child.kill('SIGKILL');
        await r.exited;
        expect(leftovers(k.emu).length).toBeGreaterThan(0);
        const rec = await recover(runDir, r.cwd);
        expect(rec.code, rec.out).toBe(0);
        expect(rec.out).toMatch(/kubernetes backend 'cluster': deleted the objects labelled sflow\/run=/);
        await waitFor(
          'the namespace to be empty of the run',
          () => leftovers(k.emu).length === 0 || undefined,
        );
        await waitFor('the MPIJob-owned objects to go', () => owned().length === 0 || undefined);
        expectNoLeak(runDir, secret);
      },
    );

    it('a failing task: the run fails, every object of the run is deleted', async () => {
      const secret = token();
      const r = await runRecipe(
        k,
        [RECIPE],
        ['-s', `API_TOKEN=${secret}`, '-s', 'FAIL=4', '-s', 'MPI_ROUTE=operator', ...(await mpiArgs())],
        dirs,
      );
      expect(r.code, r.stderr + r.stdout).not.toBe(0);
      expect(taskTable(r.runDir).check).toMatchObject({ status: 'FAILED', exit: '4' });
      expect(leftovers(k.emu)).toEqual([]);
      expect(owned()).toEqual([]);
      expectNoLeak(r.runDir, secret);
    });
  },
);
