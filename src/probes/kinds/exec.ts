/**
 * `exec`: a command's exit status as the probe's answer. Exit 0 means the condition holds: the
 * service is ready (readiness), or a failure is visible (failure probe); any other status, a
 * signal, or no answer within `each_check_timeout` means it does not.
 *
 * Where it runs: where the task's tcp_port and http_get checks run, i.e. on the machine that runs
 * sflow (the driver), for backends whose probes run from the driver (local, Docker, Slurm). A
 * backend whose probes run inside its cluster (`probesFrom: 'cluster'`, Kubernetes) has no place
 * to run it: the plan refuses the probe there, located, before anything is allocated.
 *
 * One check: `/bin/sh -c` runs the command in a process group of its own (util/process-group.ts:
 * the launcher's lifeline ends it with the driver), with the driver's environment plus the task's
 * planned one, in the task's folder. The command reaches sh through the environment
 * (`SFLOW_PROBE_COMMAND`), never on a command line, so a secret it holds does not show in `ps`.
 * At the check's time limit, or when the check is cut short, the group gets SIGTERM and, a second
 * later, SIGKILL; whatever the command left running in its group is stopped once it exits. Its
 * output goes to a temporary file; the last line (escape sequences and control characters
 * removed, at most 200 characters) is the check's detail.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripAnsi } from '../../util/ansi.js';
import { errorMessage } from '../../util/errors.js';
import { spawnGroup, type GroupHandle } from '../../util/process-group.js';
import { defineProbeKind, type ProbeTask } from '../kind.js';
import type { CheckResult, ProbeCheck } from '../types.js';

/** the last bytes of the output read for the detail */
const TAIL_BYTES = 4096;
const SHOWN_CHARS = 200;
/** TERM → KILL when a check runs out of time or is cut short */
export const EXEC_STOP_GRACE_MS = 1000;

async function outputTail(file: string): Promise<string> {
  let fh;
  try {
    fh = await open(file, 'r');
    const { size } = await fh.stat();
    const len = Math.min(size, TAIL_BYTES);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, size - len);
    const lines = stripAnsi(buf.toString('utf8')).split(/\r\n|\r|\n/);
    const last =
      lines
        .map((l) => l.trim())
        .filter(Boolean)
        .at(-1) ?? '';
    return last.length > SHOWN_CHARS ? `${last.slice(0, SHOWN_CHARS)}…` : last;
  } catch {
    return '';
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

type Ending = { exit: { code: number | null; signal: string | null } } | { cut: 'timeout' | 'aborted' };

/** Runs the command once; resolves with what the check saw, never rejects. */
export async function runExecCheck(
  command: string,
  task: ProbeTask,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<CheckResult> {
  if (signal.aborted) return { ok: false, detail: 'not checked (aborted)' };
  const dir = await mkdtemp(join(tmpdir(), 'sflow-probe-'));
  const out = join(dir, 'output');
  let group: GroupHandle | undefined;
  try {
    try {
      group = await spawnGroup({
        argv: ['/bin/sh', '-c', 'eval "$SFLOW_PROBE_COMMAND"'],
        cwd: existsSync(task.outputDir) ? task.outputDir : process.cwd(),
        env: { ...process.env, ...task.env, SFLOW_PROBE_COMMAND: command },
        logPath: out,
        graceMs: EXEC_STOP_GRACE_MS,
      });
    } catch (e) {
      return { ok: false, detail: `cannot start the command: ${errorMessage(e)}` };
    }
    const g = group;
    const t0 = Date.now();
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const ending = await Promise.race<Ending>([
      g.exited.then((exit) => ({ exit })),
      new Promise<Ending>((resolve) => {
        timer = setTimeout(() => resolve({ cut: 'timeout' }), Math.max(1, timeoutMs));
      }),
      new Promise<Ending>((resolve) => {
        onAbort = () => resolve({ cut: 'aborted' });
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
    const took = Date.now() - t0;
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
    // the command's leftovers (a background child), or the command itself when it was cut
    if (g.isRunning()) await g.stop('cut' in ending ? EXEC_STOP_GRACE_MS : 0);
    const last = await outputTail(out);
    const said = last ? `: ${last}` : '';
    // the probe loop cuts a check at its time limit too: that is a timeout, not a stop
    if ('cut' in ending)
      return {
        ok: false,
        detail:
          ending.cut === 'timeout' || took >= timeoutMs - 10
            ? `no answer within ${timeoutMs} ms (stopped)${said}`
            : 'check cut short',
      };
    const { code, signal: sig } = ending.exit;
    if (code === 0) return { ok: true, detail: `exit 0${said}` };
    return {
      ok: false,
      detail: `${code === null ? `killed by ${sig ?? 'a signal'}` : `exit ${code}`}${said}`,
    };
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

export function execCheck(command: string, task: ProbeTask): ProbeCheck {
  return {
    kind: 'exec',
    describe: () => `exec ${JSON.stringify(command)}`,
    check: (signal, timeoutMs) => runExecCheck(command, task, signal, timeoutMs),
  };
}

export const execProbe = defineProbeKind({
  name: 'exec',
  schema: (k) =>
    k.strictObject('exec probe', {
      /** run by /bin/sh on the machine that runs sflow; exit 0: the condition holds */
      command: k.str({ nonEmpty: true }),
    }),
  plan: (body, k) => {
    if (k.probesFrom !== 'driver')
      k.fail(
        undefined,
        'plan.probe_where',
        `exec probe of task '${k.task}' cannot run on backend ${k.backend}: its probes run inside the cluster, and an exec probe runs its command on the machine that runs sflow`,
        'use tcp_port or http_get there (they run from inside the cluster)',
      );
    return { command: k.text(body.command, 'command') };
  },
  place: (d) => d,
  describe: (p) => `exec ${JSON.stringify(p.command)}`,
  dryRun: (p, timing) => `exec ${JSON.stringify(p.command)} on this machine, exit 0 = met (${timing})`,
  check: (p, ctx) => execCheck(p.command, ctx.task),
});
