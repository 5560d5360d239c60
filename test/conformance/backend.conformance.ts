/**
 * The shared conformance suite every Backend implementation passes (ARCHITECTURE.md:
 * "Each adapter family has one shared conformance suite"). It launches real `bash -c`
 * scripts through the backend and checks exit codes, environment, graceful stop, killing a
 * whole process tree, log streaming and reachability of a socket the task opens.
 *
 *   describeBackendConformance('local', () => new LocalBackend(planned));
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Backend, TaskHandle } from '../../src/backends/backend.js';
import type { PlannedNode, PlannedTask } from '../../src/plan/types.js';
import { tcpPortCheck } from '../../src/probes/tcp.js';
import { groupState } from '../../src/util/group-liveness.js';
import { plannedTask } from '../helpers/planned-task.js';

export interface ConformanceOptions {
  /** turn the generic bash task into what this backend launches (operator argv etc.) */
  adaptTask?: (t: PlannedTask) => PlannedTask;
  /** pids of this backend's processes are visible in this machine's /proc (local: yes) */
  localProcesses?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(fn: () => T | undefined | false, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (let delay = 5; ; delay = Math.min(delay * 2, 50)) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(delay);
  }
}

/** pids of live (non-zombie) processes whose command line contains `marker` */
export function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'latin1');
      if (!cmd.includes(marker)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') out.push(Number(name));
    } catch {
      // exited while we looked
    }
  }
  return out;
}

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

export function describeBackendConformance(
  name: string,
  makeBackend: () => Backend,
  opts: ConformanceOptions = {},
): void {
  describe(`backend conformance: ${name}`, () => {
    let dir: string;
    let backend: Backend;
    let nodes: PlannedNode[];
    const launched: TaskHandle[] = [];
    let seq = 0;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), `sflow-conf-${name}-`));
      backend = makeBackend();
      await backend.preflight();
      nodes = await backend.allocate();
    });
    afterEach(async () => {
      await Promise.all(launched.splice(0).map((h) => backend.kill(h).catch(() => undefined)));
    });
    afterAll(async () => {
      await backend.release();
      rmSync(dir, { recursive: true, force: true });
    });

    function makeTask(script: string, env: Record<string, string> = {}): PlannedTask {
      const tname = `t${++seq}`;
      const outputDir = join(dir, tname);
      mkdirSync(outputDir, { recursive: true });
      const t = plannedTask(
        tname,
        {
          backend: backend.name,
          backendType: backend.type,
          operator: { name: 'conformance', type: 'bash', config: {} },
          script,
          argv: ['bash', '-c', script],
          env,
          nodes: nodes.slice(0, 1),
        },
        dir,
      );
      return opts.adaptTask ? opts.adaptTask(t) : t;
    }

    async function launch(script: string, env: Record<string, string> = {}) {
      const task = makeTask(script, env);
      const fullEnv: Record<string, string> = {};
      for (const [k, v] of Object.entries(process.env)) if (v !== undefined) fullEnv[k] = v;
      const handle = await backend.launch(task, {
        runDir: dir,
        attempt: 1,
        env: { ...fullEnv, ...env },
        cwd: dir,
      });
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

    it('allocates at least one node with an address', () => {
      expect(nodes.length).toBeGreaterThan(0);
      expect(nodes[0].name).toBeTruthy();
      expect(nodes[0].ip).toBeTruthy();
    });

    it('reports exit codes', async () => {
      const ok = await launch('true');
      const bad = await launch('exit 7');
      expect(await backend.wait(ok.handle)).toMatchObject({ code: 0 });
      expect(await backend.wait(bad.handle)).toMatchObject({ code: 7 });
    });

    it('handles are plain serializable data', async () => {
      const { handle } = await launch('true');
      expect(JSON.parse(JSON.stringify(handle))).toEqual(handle);
      expect(handle.attempt).toBe(1);
      await backend.wait(handle);
    });

    it('passes the environment to the task', async () => {
      const { handle, log } = await launch('echo "value=$SFLOW_CONF_VALUE spaces=[$SFLOW_CONF_SPACES]"', {
        SFLOW_CONF_VALUE: 'abc123',
        SFLOW_CONF_SPACES: 'a b  c',
      });
      await backend.wait(handle);
      expect(log()).toBe('value=abc123 spaces=[a b  c]\n');
    });

    it('streams output into the log in order, byte for byte, while the task runs', async () => {
      const { handle, log } = await launch(
        'printf "one\\n"; sleep 0.3; printf "two\\r\\n\\x1b[1mbold\\x1b[0m"; sleep 0.3; printf "\\nthree" >&2',
      );
      await until(() => log() === 'one\n', 3000, 'first line before the task ends');
      expect(await backend.wait(handle)).toMatchObject({ code: 0 });
      expect(log()).toBe('one\ntwo\r\n\x1b[1mbold\x1b[0m\nthree');
    });

    it('stop() honours SIGTERM within the grace period', async () => {
      const { handle, log } = await launch(
        'trap "echo got-term; exit 0" TERM; echo ready; while :; do sleep 0.05; done',
      );
      await until(() => log().includes('ready'), 5000, 'task ready');
      const t0 = Date.now();
      await backend.stop(handle, 5000);
      expect(Date.now() - t0).toBeLessThan(3000);
      expect(log()).toContain('got-term');
    });

    it('stop() kills a task that ignores SIGTERM after the grace', async () => {
      const { handle, log } = await launch('trap "" TERM; echo ready; while :; do sleep 0.05; done');
      await until(() => log().includes('ready'), 5000, 'task ready');
      const t0 = Date.now();
      await backend.stop(handle, 300);
      const took = Date.now() - t0;
      expect(took).toBeGreaterThanOrEqual(250);
      expect(took).toBeLessThan(4000);
      const st = await backend.wait(handle);
      expect(st.code).toBeNull();
    });

    it('stop() removes the whole process tree, background grandchildren included', async () => {
      const marker = `${Date.now() % 100000}.${Math.floor(Math.random() * 1e6)}`;
      const { handle, log } = await launch(
        `sleep 1${marker} & ( sleep 2${marker} & ) ; bash -c 'trap "" TERM; sleep 3${marker}' & echo started; wait`,
      );
      await until(() => log().includes('started'), 5000, 'task start');
      if (opts.localProcesses !== false)
        await until(() => processesWith(marker).length >= 3, 5000, 'three sleepers');
      await backend.stop(handle, 500);
      if (opts.localProcesses !== false) {
        await until(() => processesWith(marker).length === 0, 3000, 'no process left');
        expect(processesWith(marker)).toEqual([]);
        const pgid = Number(handle.ids.pgid);
        // nothing of the group runs any more (zombies waiting for a reaper do not count)
        if (pgid > 0) expect(groupState(pgid)).not.toBe('alive');
      }
    });

    it('kill() ends the task at once', async () => {
      const marker = `${Date.now() % 100000}.${Math.floor(Math.random() * 1e6)}`;
      const { handle, log } = await launch(`trap "" TERM; sleep 4${marker} & echo started; wait`);
      await until(() => log().includes('started'), 5000, 'task start');
      const t0 = Date.now();
      await backend.kill(handle);
      const st = await backend.wait(handle);
      expect(Date.now() - t0).toBeLessThan(2000);
      expect(st.code).toBeNull();
      if (opts.localProcesses !== false)
        await until(() => processesWith(marker).length === 0, 3000, 'no process left');
    });

    it('a socket the task opens is reachable at the node address (tcp probe)', async () => {
      const port = await freePort();
      const { handle } = await launch(
        "exec python3 -c \"import socket,os,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); time.sleep(0.3); s.bind(('0.0.0.0', int(os.environ['PORT']))); s.listen(); time.sleep(60)\"",
        { PORT: String(port) },
      );
      const check = tcpPortCheck({ hosts: [nodes[0].ip], port });
      const first = await check.check(AbortSignal.timeout(1000), 1000);
      expect(first.ok).toBe(false); // not yet listening
      const end = Date.now() + 10_000;
      let r = first;
      while (!r.ok && Date.now() < end) {
        await sleep(50);
        r = await check.check(AbortSignal.timeout(1000), 1000);
      }
      expect(r).toMatchObject({ ok: true });
      await backend.stop(handle, 1000);
    });
  });
}
