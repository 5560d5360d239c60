/**
 * Nothing of a run is left in the namespace (issue 12) — task pods, merged pods, k8s_mpi launcher
 * and worker pods (pods route; MPIJob route: the MPIJob and what the emulator's mpi-operator made
 * for it), ConfigMaps, Secrets: after Ctrl-C or SIGTERM, a failing task, and after a SIGKILLed
 * driver once `sflow recover <run dir>` ran, or once the next run in the namespace started (whatever
 * kinds the dead driver left: all, only Secrets, only the MPIJob) — drivers without a lifeline; one
 * with the launcher's lifeline has its run reaper delete everything at once. Every run carries a token in its
 * env Secret; it appears in no file of the run directory and in no request the emulator logged
 * (the log redacts Secret payloads, so a hit is a leak through a pod spec, a ConfigMap, an argv).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onlyRunDir, taskLog, taskTable } from '../../helpers/run-dir.js';
import { leftovers } from './backend-helpers.js';
import { resKey, resourceDefs } from '../../fixtures/k8s-emulator/resources.js';
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
    async function startRun(secret: string, route = 'pods', env: Record<string, string> = {}) {
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
        env: { ...process.env, NO_COLOR: '1', ...env },
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
        // no lifeline (SFLOW_LAUNCHER=inline: as if the launcher died with the driver), the case
        // `sflow recover` exists for; with one, the run reaper recovers at once (test below)
        const r = await startRun(secret, route, { SFLOW_LAUNCHER: 'inline' });
        const runDir = onlyRunDir(join(r.cwd, 'sflow_output'));
        const alive = await recover(runDir, r.cwd);
        expect(alive.code, alive.out).not.toBe(0);
        expect(alive.out).toMatch(/another sflow drives this run folder: pid \d+/);
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

    it('a SIGKILLed driver (default launcher): its reaper deletes every object of the run at once, the run is marked lost', async () => {
      const secret = token();
      const r = await startRun(secret, 'pods');
      const runDir = onlyRunDir(join(r.cwd, 'sflow_output'));
      expect(leftovers(k.emu).length).toBeGreaterThan(0);
      r.child.kill('SIGKILL');
      await r.exited;
      // polled: the lifeline wakes the reaper, whose `sflow recover` deletes the run's objects
      await waitFor(
        'the namespace to be empty of the run',
        () => leftovers(k.emu).length === 0 || undefined,
        90_000,
      );
      await waitFor('the MPIJob-owned objects to go', () => owned().length === 0 || undefined);
      await waitFor(
        'the summary to say the driver was lost',
        () =>
          /ended by a lost driver/.test(readFileSync(join(runDir, 'sflow_summary.log'), 'utf8')) || undefined,
        60_000,
      );
      expectNoLeak(runDir, secret);
    });

    /**
     * Every object in the namespace, sflow's or not, per namespaced kind the emulator serves
     * (what the mpi-operator made, reservation pods, PVCs, quotas, events included).
     */
    const everything = () =>
      resourceDefs({ mpiJob: true, dra: false })
        .filter((d) => d.namespaced)
        .flatMap((d) =>
          (k.emu.store.list(resKey(d), 'default') as Array<{ metadata: { name: string } }>).map(
            (o) => `${resKey(d)}/${o.metadata.name}`,
          ),
        );

    /** a small run in the same namespace on this host, in this process */
    function nextRun(cwd: string) {
      const f = join(cwd, 'next.yaml');
      writeFileSync(
        f,
        `version: '0.1'
backends:
  - name: cluster
    type: kubernetes
    default: true
    namespace: default
    nodes: 1
    gpus_per_node: 4
    reservation:
      timeout: 60
operators:
  - name: pod
    type: k8s
    image: bash:5
workflow:
  name: k8s_next
  tasks:
    - name: hello
      operator: pod
      script: ["echo next run"]
`,
      );
      return runRecipe(k, [f], [], dirs);
    }

    /**
     * The next run finds a dead driver's run in this user's index of live runs (runtime/live-runs.ts)
     * and deletes its objects; where the index does not name it (another login session's index,
     * here its own SFLOW_RUN_INDEX_DIR; an index entry removed), by the objects themselves: any
     * kind sflow makes carries the driver (cleanup.ts staleRuns).
     */
    it.each([
      ['every object', 'index', 'operator', []],
      ['every object', 'objects', 'operator', []],
      // a driver killed during its own cleanup (the kinds are deleted in parallel): only Secrets
      ['only its Secrets', 'objects', 'pods', ['pods', 'configmaps']],
      ['only its MPIJob', 'objects', 'operator', ['pods', 'configmaps', 'secrets']],
    ] as const)(
      'a SIGKILLed driver left %s: the next run deletes them, found by its %s; the namespace is as before (k8s_mpi route %s)',
      async (what, foundBy, route, removed) => {
        await waitFor('a quiet namespace', () => (leftovers(k.emu).length === 0 ? true : undefined));
        const before = everything();
        const secret = token();
        const index = mkdtempSync(join(tmpdir(), 'sflow-k8s-index-'));
        dirs.push(index);
        const r = await startRun(secret, route, {
          SFLOW_LAUNCHER: 'inline', // no lifeline, no reaper: what is left is the next run's to find
          ...(foundBy === 'objects' ? { SFLOW_RUN_INDEX_DIR: index } : {}),
        });
        const runDir = onlyRunDir(join(r.cwd, 'sflow_output'));
        r.child.kill('SIGKILL');
        await r.exited;
        const label = (
          k.emu.store.list('pods', 'default') as Array<{ metadata: { labels?: Record<string, string> } }>
        )
          .map((p) => p.metadata.labels?.['sflow/run'])
          .find(Boolean)!;
        expect(label).toBeTruthy();
        const labelSelector = `sflow/run=${label}`;
        for (const kind of removed) {
          if (kind === 'pods')
            await k.core.deleteCollectionNamespacedPod({
              namespace: 'default',
              labelSelector,
              gracePeriodSeconds: 0,
            });
          if (kind === 'configmaps')
            await k.core.deleteCollectionNamespacedConfigMap({ namespace: 'default', labelSelector });
          if (kind === 'secrets')
            await k.core.deleteCollectionNamespacedSecret({ namespace: 'default', labelSelector });
        }
        if (removed.length)
          await waitFor(`the run's ${removed.join(', ')} to go`, () =>
            leftovers(k.emu, 'default', label).every((o) => !removed.some((kind) => o.startsWith(`${kind}/`)))
              ? true
              : undefined,
          );
        const kinds = [...new Set(leftovers(k.emu, 'default', label).map((o) => o.split('/')[0]))].sort();
        if (what === 'only its Secrets') expect(kinds).toEqual(['secrets']);
        if (what === 'only its MPIJob') expect(kinds).toContain('mpijobs.kubeflow.org');
        if (what === 'every object')
          expect(kinds).toEqual(['configmaps', 'mpijobs.kubeflow.org', 'pods', 'secrets']);

        const next = await nextRun(r.cwd);
        expect(next.code, next.stderr + next.stdout).toBe(0);
        const log = readFileSync(join(next.runDir, 'sflow.log'), 'utf8');
        const runId = runDir.split('/').pop()!;
        if (foundBy === 'index')
          expect(log).toContain(`deleted the objects labelled sflow/run=${label} in namespace default`);
        else expect(log).toContain(`deleted the objects of run ${runId}, whose driver on this host is gone`);
        await waitFor(`the namespace as before the killed run (now: ${everything().join(' ')})`, () =>
          JSON.stringify(everything()) === JSON.stringify(before) ? true : undefined,
        );
        expect(owned()).toEqual([]);
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
