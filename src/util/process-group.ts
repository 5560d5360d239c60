/**
 * Task attempts run in their own process group (their own session, in fact: setsid), and write
 * straight into their log file: stdout and stderr are the same append-mode descriptor, so the log
 * holds every byte in write order and no task output ever passes through the driver's memory.
 * They are started by the launcher (util/launcher/: a small process forked once, which is also
 * every attempt's lifeline to this driver), or inline from the driver when no launcher runs.
 *
 * Stopping signals the whole group (TERM, grace, KILL) and waits until no member runs any
 * more: the leader exiting is not enough, background children and grandchildren count too.
 * A module-level registry lets a last-resort `process.on('exit')` hook SIGKILL every group
 * still alive, so a crashing driver leaves nothing behind.
 */

import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { groupState } from './process-liveness.js';
import { getLauncher, LaunchFailure, type LeaderExit } from './launcher/client.js';
import { FrameError } from './launcher/protocol.js';
import {
  DEFAULT_GRACE_MS,
  installExitHook,
  killAllGroupsSync,
  liveGroups,
  signalGroup,
  stopGroup,
  trackGroup,
  untrackGroup,
} from './terminate/index.js';

export interface SpawnGroupOptions {
  /** argv[0] is the program (looked up on PATH), the rest its arguments; no shell. */
  argv: string[];
  cwd?: string;
  /** the complete environment of the task (not merged with the driver's); default: the driver's */
  env?: NodeJS.ProcessEnv;
  /** stdout and stderr are appended here, byte for byte */
  logPath: string;
  /** TERM → KILL grace the lifeline gives the group when this driver dies (default 5 s) */
  graceMs?: number;
}

/** the leader's exit; `at`: when this driver learned of it (ms since epoch, the exit's time to a few ms) */
export type GroupExit = LeaderExit & { at?: number };

export type { GroupStopOutcome as StopOutcome } from './terminate/index.js';
import type { GroupStopOutcome as StopOutcome } from './terminate/index.js';

export interface GroupHandle {
  readonly pid: number;
  readonly pgid: number;
  readonly startedAt: number;
  /** /proc start time of the leader (PID-reuse guard); null when unknown */
  readonly startTime: number | null;
  /** resolves when the leader exits (its children may still run: see isRunning) */
  readonly exited: Promise<GroupExit>;
  /** the leader's exit, once known */
  exitInfo(): GroupExit | undefined;
  /** some member of the group still runs (zombies do not count) */
  isRunning(): boolean;
  /** SIGTERM the group, wait up to graceMs for it to empty, then SIGKILL it. Idempotent. */
  stop(graceMs?: number): Promise<StopOutcome>;
  /** SIGKILL the group now (a second Ctrl-C); a stop() in progress finishes promptly. */
  killGroupNow(): void;
}

export class SpawnError extends Error {
  readonly code: string | undefined;
  readonly argv: string[];
  constructor(argv: string[], cause: { code?: string; message: string }) {
    const what = cause.code === 'ENOENT' ? 'program or working directory not found' : cause.message;
    super(`cannot start '${argv[0]}': ${what}${cause.code ? ` (${cause.code})` : ''}`);
    this.name = 'SpawnError';
    this.code = cause.code;
    this.argv = argv;
  }
}

export { DEFAULT_GRACE_MS, liveGroups, killAllGroupsSync, installExitHook };

/**
 * Node's spawn() forks synchronously (~7–15 ms here). A thousand tasks submitted at once would
 * block the event loop for seconds (no probes, signals, keys or live view meanwhile), so spawns
 * take turns and the loop gets a turn of its own whenever ~8 ms have gone by since it last had one.
 */
const SPAWN_SLICE_MS = 8;
let spawnQueue: Promise<void> = Promise.resolve();
let lastYield = performance.now();

function spawnTurn(): Promise<void> {
  const turn = spawnQueue.then(async () => {
    if (performance.now() - lastYield < SPAWN_SLICE_MS) return;
    await new Promise<void>((r) => setImmediate(r));
    lastYield = performance.now();
  });
  spawnQueue = turn;
  return turn;
}

export async function spawnGroup(opts: SpawnGroupOptions): Promise<GroupHandle> {
  if (opts.argv.length === 0) throw new Error('spawnGroup: empty argv');
  const launcher = await getLauncher();
  let started: { pid: number; startTime: number | null; exited: Promise<GroupExit> };
  if (launcher) {
    try {
      started = await launcher.launch({
        argv: opts.argv,
        cwd: opts.cwd ?? process.cwd(),
        env: opts.env ?? process.env,
        logPath: opts.logPath,
        graceMs: opts.graceMs ?? DEFAULT_GRACE_MS,
      });
    } catch (e) {
      if (e instanceof LaunchFailure) throw new SpawnError(opts.argv, e);
      if (e instanceof FrameError) throw new SpawnError(opts.argv, { message: e.message });
      throw e;
    }
  } else started = await spawnInline(opts);
  return groupHandle(opts.argv[0], started);
}

/** Node's own spawn from the driver (no launcher): synchronous fork, spawns take turns. */
async function spawnInline(
  opts: SpawnGroupOptions,
): Promise<{ pid: number; startTime: number | null; exited: Promise<GroupExit> }> {
  await spawnTurn();
  const fd = openSync(opts.logPath, 'a');
  let child;
  try {
    child = spawn(opts.argv[0], opts.argv.slice(1), {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      detached: true,
      stdio: ['ignore', fd, fd],
      windowsHide: true,
    });
  } finally {
    closeSync(fd); // the child holds its own copy
  }
  const failure = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', (err) => resolve(err));
  });
  if (failure) throw new SpawnError(opts.argv, failure);
  child.on('error', () => {}); // later errors (a failed kill) must not crash the driver
  const exited = new Promise<GroupExit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { pid: child.pid as number, startTime: null, exited };
}

function groupHandle(
  argv0: string,
  started: { pid: number; startTime: number | null; exited: Promise<GroupExit> },
): GroupHandle {
  const pid = started.pid;
  const pgid = pid;
  trackGroup(pgid, argv0);
  const startedAt = Date.now();
  let exit: GroupExit | undefined;
  const exited = started.exited.then((left): GroupExit => {
    const e: GroupExit = { ...left, at: Date.now() };
    exit = e;
    // The leader is gone; keep the group tracked while children still run.
    if (groupState(pgid, false) !== 'alive') untrackGroup(pgid);
    return e;
  });

  const hurry = new AbortController();
  let stopping: Promise<StopOutcome> | undefined;
  const doStop = async (graceMs: number): Promise<StopOutcome> => {
    const out = await stopGroup(pgid, { graceMs, hurry: hurry.signal, leaderExit: exited });
    if (out.gone) {
      untrackGroup(pgid);
      // Let the leader's exit status land so callers can read it right after stop().
      if (!exit) await Promise.race([exited, new Promise((r) => setTimeout(r, 200).unref())]);
    }
    return out;
  };

  return {
    pid,
    pgid,
    startedAt,
    startTime: started.startTime,
    exited,
    exitInfo: () => exit,
    isRunning: () => groupState(pgid) === 'alive',
    stop(graceMs = DEFAULT_GRACE_MS) {
      stopping ??= doStop(graceMs);
      return stopping;
    },
    killGroupNow() {
      hurry.abort();
      signalGroup(pgid, 'SIGKILL');
    },
  };
}
