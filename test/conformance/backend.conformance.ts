/**
 * The shared conformance suite every Backend implementation passes (contract v2,
 * docs/adding-a-backend.md). It launches real `bash -c` scripts through the backend and checks
 * exit codes, environment, output landing in the log, graceful and forced batched stop, killing a
 * whole process tree, the SUBMITTED → RUNNING → EXITED order, recording handles, release twice,
 * cancelling a slow allocation and reattaching from the ledger of a driver that was SIGKILLed.
 *
 *   describeBackendConformance('local', () => new LocalBackend(planned), { … });
 */
import { getEventListeners, setMaxListeners } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  HANDLE_VERSION,
  handleKey,
  type Backend,
  type HandleStatus,
  type TaskHandle,
} from '../../src/backends/backend.js';
import { HandleLedger, readHandleLedger } from '../../src/events/handle-ledger.js';
import { applyHandleStatus } from '../../src/runtime/attempt-handles.js';
import type { PlannedNode, PlannedTask } from '../../src/plan/types.js';
import { tcpPortCheck } from '../../src/probes/tcp.js';
import { groupState } from '../../src/util/process-liveness.js';
import { plannedTask } from '../helpers/planned-task.js';
import { processesWith, until, untilAsync } from './procs.js';

export { processesWith } from './procs.js';

export interface ConformanceOptions {
  /** pids of this backend's processes are visible in this machine's /proc (local: yes) */
  localProcesses?: boolean;
  /** the engine queues attempts: SUBMITTED must be reported before RUNNING */
  queues?: boolean;
  /** a backend whose allocate waits (queued) until it is cancelled, and how to undo the setup */
  slowAllocate: () => { backend: Backend; cleanup?: () => void };
  /**
   * A driver that launches `script` on this backend, writes the handle ledger and is then
   * SIGKILLed; resolves with the ledger path. The suite then recovers from that ledger.
   */
  deadDriver: (dir: string, script: string) => Promise<string>;
  /** a fresh instance (another driver) that recovers from a ledger */
  recoverer: () => Backend;
  /**
   * the command a test task runs (default `bash -c <script>`); a backend whose tasks are engine
   * submissions (Slurm: an `srun` step) wraps the script in the operator's argv here
   */
  taskArgv?: (script: string, task: string, nodes: PlannedNode[]) => string[];
  /** the test tasks' operator (default a `bash` one): Kubernetes runs only its own kinds */
  operator?: PlannedTask['operator'];
  /**
   * How many stop/cancel operations the engine itself has received so far, counted at the
   * engine's boundary (the test engine's cancel calls, Slurm's `scancel --signal=TERM`
   * invocations, …). A batched stop of 50 running attempts must add exactly one. Absent: the
   * backend has no engine-level batch to count (local: every process group is its own kill(2),
   * one concurrent pass over the groups) or the suite cannot run its engine here.
   */
  engineStops?: () => number;
}

const STATES = ['SUBMITTED', 'RUNNING', 'EXITED'];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Follows one handle through watch or poll; resolves with every state seen and the final status. */
export async function follow(
  backend: Backend,
  handle: TaskHandle,
  ms = 20_000,
): Promise<{ seen: string[]; last: HandleStatus }> {
  const seen: string[] = [handle.state];
  const ac = new AbortController();
  let pushed: HandleStatus | undefined;
  backend.watch?.({ onStatus: (h, s) => handleKey(h) === handleKey(handle) && (pushed = s) }, ac.signal);
  const end = Date.now() + ms;
  try {
    for (;;) {
      const s = pushed ?? (await backend.poll([handle], AbortSignal.timeout(5_000))).get(handleKey(handle));
      if (s && seen.at(-1) !== s.state) seen.push(s.state);
      if (s?.state === 'EXITED') return { seen, last: s };
      if (Date.now() > end) throw new Error(`timed out following ${handleKey(handle)}: ${seen.join(' → ')}`);
      await sleep(15);
    }
  } finally {
    ac.abort();
  }
}

export function describeBackendConformance(
  name: string,
  makeBackend: () => Backend,
  opts: ConformanceOptions,
): void {
  describe(`backend conformance: ${name}`, () => {
    let dir: string;
    let backend: Backend;
    let nodes: PlannedNode[];
    const launched: TaskHandle[] = [];
    const recorded: TaskHandle[] = [];
    let seq = 0;
    const never = new AbortController().signal;
    // as the orchestrator's run-wide signal: every launch in flight listens to it (50 at once below)
    setMaxListeners(0, never);

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), `sflow-conf-${name}-`));
      backend = makeBackend();
      await backend.preflight(never);
      nodes = (await backend.allocate(never, () => undefined)).nodes;
    });
    afterEach(async () => {
      await backend.stop(launched.splice(0), { graceMs: 0, force: true }, AbortSignal.timeout(10_000));
      // each call removes its abort listener when it ends: none piles up on the run-wide signal
      expect(getEventListeners(never, 'abort')).toHaveLength(0);
    });
    afterAll(async () => {
      await backend.release(never);
      rmSync(dir, { recursive: true, force: true });
    });

    function makeTask(script: string, env: Record<string, string> = {}): PlannedTask {
      const tname = `t${++seq}`;
      mkdirSync(join(dir, tname), { recursive: true });
      return plannedTask(
        tname,
        {
          backend: backend.name,
          backendType: backend.type,
          operator: opts.operator ?? { name: 'conformance', type: 'bash', config: {} },
          script,
          argv: opts.taskArgv?.(script, tname, nodes.slice(0, 1)) ?? ['bash', '-c', script],
          env,
          nodes: nodes.slice(0, 1),
        },
        dir,
      );
    }

    async function launch(script: string, env: Record<string, string> = {}) {
      const task = makeTask(script, env);
      const baseEnv: Record<string, string> = {};
      for (const [k, v] of Object.entries(process.env)) if (v !== undefined) baseEnv[k] = v;
      const handle = await backend.launch(
        {
          task,
          attempt: 1,
          specs: task.launch,
          baseEnv,
          cwd: dir,
          runDir: dir,
          record: (h) => recorded.push(h),
        },
        never,
      );
      launched.push(handle);
      const log = () => {
        try {
          return readFileSync(task.logPath, 'utf8');
        } catch {
          return '';
        }
      };
      return { task, handle, log };
    }

    const stopOne = async (h: TaskHandle, graceMs: number, force = false) =>
      (await backend.stop([h], { graceMs, force }, AbortSignal.timeout(15_000))).get(handleKey(h))!;

    it('allocates at least one node with an address', () => {
      expect(nodes.length).toBeGreaterThan(0);
      expect(nodes[0].name).toBeTruthy();
      expect(nodes[0].ip).toBeTruthy();
    });

    it('reports exit codes through batched status', async () => {
      const ok = await launch('true');
      const bad = await launch('exit 7');
      expect((await follow(backend, ok.handle)).last.exit).toMatchObject({ code: 0 });
      expect((await follow(backend, bad.handle)).last.exit).toMatchObject({ code: 7 });
    });

    it('handles are plain, versioned data, recorded before launch resolves', async () => {
      const before = recorded.length;
      const { handle } = await launch('true');
      expect(JSON.parse(JSON.stringify(handle))).toEqual(handle);
      expect(handle).toMatchObject({ v: HANDLE_VERSION, attempt: 1, backend: backend.name });
      expect(recorded.length).toBeGreaterThan(before);
      expect(handleKey(recorded.at(-1)!)).toBe(handleKey(handle));
      await follow(backend, handle);
    });

    it('reports SUBMITTED, RUNNING and EXITED in that order', async () => {
      const { handle } = await launch('sleep 0.3');
      expect(['SUBMITTED', 'RUNNING']).toContain(handle.state);
      const { seen } = await follow(backend, handle);
      const order = seen.map((s) => STATES.indexOf(s));
      expect(order).toEqual([...order].sort((a, b) => a - b));
      if (opts.queues) expect(seen.slice(0, 2)).toEqual(['SUBMITTED', 'RUNNING']);
    });

    it('passes the environment to the task', async () => {
      const { handle, log } = await launch('echo "value=$SFLOW_CONF_VALUE spaces=[$SFLOW_CONF_SPACES]"', {
        SFLOW_CONF_VALUE: 'abc123',
        SFLOW_CONF_SPACES: 'a b  c',
      });
      await follow(backend, handle);
      expect(log()).toBe('value=abc123 spaces=[a b  c]\n');
    });

    it('lands output in the log in order, byte for byte, while the task runs', async () => {
      const { handle, log } = await launch(
        'printf "one\\n"; sleep 0.3; printf "two\\r\\n\\x1b[1mbold\\x1b[0m"; sleep 0.3; printf "\\nthree" >&2',
      );
      await until(() => log() === 'one\n', 5000, 'first line before the task ends');
      expect((await follow(backend, handle)).last.exit).toMatchObject({ code: 0 });
      expect(log()).toBe('one\ntwo\r\n\x1b[1mbold\x1b[0m\nthree');
    });

    it('stop honours SIGTERM within the grace period', async () => {
      const { handle, log } = await launch(
        'trap "echo got-term; exit 0" TERM; echo ready; while :; do sleep 0.05; done',
      );
      await until(() => log().includes('ready'), 5000, 'task ready');
      const o = await stopOne(handle, 5000);
      expect(o).toMatchObject({ gone: true, alreadyGone: false });
      expect(o.signals).not.toContain('SIGKILL');
      expect(log()).toContain('got-term');
    });

    it('stop kills a task that ignores SIGTERM after the grace', async () => {
      const { handle, log } = await launch('trap "" TERM; echo ready; while :; do sleep 0.05; done');
      await until(() => log().includes('ready'), 5000, 'task ready');
      const o = await stopOne(handle, 300);
      expect(o.gone).toBe(true);
      expect(o.elapsedMs).toBeGreaterThanOrEqual(250);
      expect((await follow(backend, handle)).last.exit?.code ?? null).toBeNull();
    });

    it('stop removes the whole process tree, background grandchildren included', async () => {
      const marker = `${Date.now() % 100000}.${Math.floor(Math.random() * 1e6)}`;
      const { handle, log } = await launch(
        `sleep 1${marker} & ( sleep 2${marker} & ) ; bash -c 'trap "" TERM; sleep 3${marker}' & echo started; wait`,
      );
      await until(() => log().includes('started'), 5000, 'task start');
      if (opts.localProcesses) await until(() => processesWith(marker).length >= 3, 5000, 'three sleepers');
      await stopOne(handle, 500);
      if (opts.localProcesses) {
        await until(() => processesWith(marker).length === 0, 3000, 'no process left');
        const pgid = handle.process?.pgid ?? 0;
        // nothing of the group runs any more (zombies waiting for a reaper do not count)
        if (pgid > 0) expect(groupState(pgid)).not.toBe('alive');
      }
    });

    it('a forced stop ends the task at once', async () => {
      const marker = `${Date.now() % 100000}.${Math.floor(Math.random() * 1e6)}`;
      const { handle, log } = await launch(`trap "" TERM; sleep 4${marker} & echo started; wait`);
      await until(() => log().includes('started'), 5000, 'task start');
      const o = await stopOne(handle, 60_000, true);
      expect(o.gone).toBe(true);
      expect(o.elapsedMs).toBeLessThan(30_000);
      if (opts.localProcesses) await until(() => processesWith(marker).length === 0, 3000, 'no process left');
    });

    it('stops 50 attempts in one batched call with an outcome per handle (one engine stop where counted)', async () => {
      const tasks = await Promise.all(Array.from({ length: 50 }, () => launch('echo up; exec sleep 60')));
      await until(() => tasks.every((t) => t.log().includes('up')), 20_000, 'fifty tasks up');
      const engineStops = opts.engineStops;
      const before = engineStops?.() ?? 0;
      const got = await backend.stop(
        tasks.map((t) => t.handle),
        { graceMs: 2000 },
        AbortSignal.timeout(20_000),
      );
      // batched at the engine: one stop operation for all fifty, not one per handle
      if (engineStops) expect(engineStops() - before).toBe(1);
      expect(got.size).toBe(50);
      for (const t of tasks) expect(got.get(handleKey(t.handle))).toMatchObject({ gone: true });
    });

    it('inspect tells whether an attempt still runs', async () => {
      const { handle, log } = await launch('echo up; exec sleep 30');
      await until(() => log().includes('up'), 5000, 'task up');
      expect(await backend.inspect(handle, never)).toMatchObject({ alive: true });
      await stopOne(handle, 1000);
      expect(await backend.inspect(handle, never)).toMatchObject({ alive: false });
    });

    it('a socket the task opens is reachable at the node address (tcp probe)', async () => {
      const port = await freePort();
      const { handle } = await launch(
        "exec python3 -c \"import socket,os,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); time.sleep(0.3); s.bind(('0.0.0.0', int(os.environ['PORT']))); s.listen(); time.sleep(60)\"",
        { PORT: String(port) },
      );
      const check = tcpPortCheck({ hosts: [nodes[0].ip], port });
      let r = await check.check(AbortSignal.timeout(1000), 1000);
      const end = Date.now() + 10_000;
      while (!r.ok && Date.now() < end) {
        await sleep(50);
        r = await check.check(AbortSignal.timeout(1000), 1000);
      }
      expect(r).toMatchObject({ ok: true });
      await stopOne(handle, 1000);
    });

    it('release is idempotent: twice, partial, and never allocated', async () => {
      const b = makeBackend();
      await b.release(never); // never allocated
      await b.allocate(never, () => undefined);
      await b.release(never, []);
      await b.release(never);
      await b.release(never);
    });

    it('allocate can be cancelled while it waits', async () => {
      const { backend: slow, cleanup } = opts.slowAllocate();
      try {
        const ac = new AbortController();
        const progress: string[] = [];
        const p = slow.allocate(ac.signal, (m) => progress.push(m));
        await sleep(150);
        ac.abort();
        const t0 = Date.now();
        await expect(p).rejects.toThrow();
        expect(Date.now() - t0).toBeLessThan(5_000);
        await slow.release(never);
      } finally {
        cleanup?.();
      }
    });

    it("a handle's engine state round-trips through the ledger and recover reads it; a foreign or malformed one is refused", async () => {
      const { handle, log } = await launch('echo up; exec sleep 30');
      const file = join(dir, `roundtrip-${seq}.jsonl`);
      const ledger = new HandleLedger(file);
      ledger.write('launched', handle);
      // the runtime's own path: status answers (late engine names) applied to the handle and recorded
      await untilAsync(
        async () => {
          const s = (await backend.poll([handle], AbortSignal.timeout(5_000))).get(handleKey(handle));
          if (s)
            applyHandleStatus(
              handle,
              s,
              (op, h) => ledger.write(op, h),
              () => undefined,
            );
          return handle.state === 'RUNNING' && log().includes('up');
        },
        20_000,
        'task running',
      );
      ledger.close();
      const [read] = readHandleLedger(file).open;
      expect(read.engine).toEqual(handle.engine);
      expect(read.remoteIds).toEqual(handle.remoteIds);
      expect(typeof read.engine.kind).toBe('string');
      const other = opts.recoverer();
      const opts1 = { graceMs: 1000 };
      // another kind's state, and a state of this kind with every field of the wrong type: refused
      // with an error that names the attempt, never taken for "nothing left"
      await expect(
        other.recover({ ...read, engine: { kind: 'no-such-kind' } }, opts1, AbortSignal.timeout(15_000)),
      ).rejects.toThrow(new RegExp(`${read.task}#1`));
      const fields = Object.keys(read.engine).filter((k) => k !== 'kind');
      if (fields.length) {
        const bad = { kind: read.engine.kind, ...Object.fromEntries(fields.map((k) => [k, 42])) };
        await expect(
          other.recover({ ...read, engine: bad }, opts1, AbortSignal.timeout(15_000)),
        ).rejects.toThrow(new RegExp(`${read.task}#1`));
      }
      expect(await backend.inspect(handle, never)).toMatchObject({ alive: true });
      const r = await other.recover(read, opts1, AbortSignal.timeout(30_000));
      expect(r).toMatchObject({ found: true, stop: { gone: true } });
    });

    it('reattaches from the ledger of a SIGKILLed driver: recover stops what is left', async () => {
      const marker = `${Date.now() % 100000}.${Math.floor(Math.random() * 1e6)}`;
      const ledger = await opts.deadDriver(dir, `echo up; exec sleep 6${marker}`);
      const { open } = readHandleLedger(ledger);
      expect(open.length).toBe(1);
      const other = opts.recoverer();
      if (opts.localProcesses) expect(processesWith(marker).length).toBeGreaterThan(0);
      const r = await other.recover(open[0], { graceMs: 1000 }, AbortSignal.timeout(15_000));
      expect(r.found).toBe(true);
      expect(r.stop?.gone).toBe(true);
      if (opts.localProcesses) await until(() => processesWith(marker).length === 0, 3000, 'nothing left');
      const again = await other.recover(open[0], { graceMs: 1000 }, AbortSignal.timeout(15_000));
      expect(again.found).toBe(false);
    });
  });
}
