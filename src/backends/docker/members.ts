/**
 * The containers of one task attempt ("members", one per assigned host) and how their states add
 * up to the attempt's: every member must end with 0; the first one that ends otherwise fails the
 * attempt with its code (backends.md §3.4). The handle's engine state names every member by its
 * container and pool host (handle-state.ts), so a later driver finds them from the ledger.
 */
import { constants } from 'node:os';
import type { HandleStatus, TaskHandle } from '../backend.js';
import { engineFields, engineStateOf } from '../handle-state.js';
import { dockerHandleState, type DockerHandleState } from './handle-state.js';
import type { GroupExit } from '../../util/process-group.js';
import type { AttachedClient } from './labelled-client.js';
import type { ContainerState, DockerEngine, Endpoint } from '../container-engine.js';

export interface Member {
  name: string;
  host: Endpoint;
  /** the attached `docker run` (it lands the container's output in the task log) */
  group?: AttachedClient;
  /** the container was seen by the engine at least once */
  seen: boolean;
  /** when the container was first seen ended (the attached CLI then has a few seconds to finish) */
  endedAt?: number;
  /** when a poll first found the attached CLI ended (an inspect asked after it is a fresh answer) */
  cliEndedSeenAt?: number;
  last?: ContainerState;
  /** an engine confirmed its removal (`rm` succeeded or it no longer existed) */
  removed?: boolean;
}

/** the handle's engine state and labels for these members */
export function membersState(
  members: Array<Pick<Member, 'name' | 'host'>>,
): Pick<TaskHandle, 'engine' | 'remoteIds'> {
  const state: DockerHandleState = {
    kind: 'docker',
    members: members.map((m) => ({ container: m.name, ...(m.host ? { host: m.host } : {}) })),
  };
  return engineFields(dockerHandleState, state);
}

/** The members a handle names, read through the kind's parse (throws `run.handle_state` otherwise). */
export function membersOf(h: Pick<TaskHandle, 'engine' | 'task' | 'attempt' | 'backend'>): Member[] {
  return engineStateOf(dockerHandleState, h).members.map((m) => ({
    name: m.container,
    host: m.host,
    seen: false,
  }));
}

/** names grouped by endpoint (one engine call per endpoint) */
export function byHost(members: Member[]): Map<Endpoint, string[]> {
  const out = new Map<Endpoint, string[]>();
  for (const m of members) out.set(m.host, [...(out.get(m.host) ?? []), m.name]);
  return out;
}

const RUNNING = new Set(['running', 'paused', 'restarting', 'removing']);
const ENDED = new Set(['exited', 'dead']);

/** how long an ended container's attached CLI may still be writing the log */
export const DRAIN_MS = 10_000;

/** `startedAt` / `finishedAt`: the engine's times of the member's container (ms), when known */
export type MemberState = { startedAt?: number; finishedAt?: number } & (
  { state: 'SUBMITTED' | 'RUNNING' } | { state: 'EXITED'; code: number | null; error?: string }
);

const timesOf = (st: ContainerState | undefined): { startedAt?: number; finishedAt?: number } => ({
  ...(st?.startedAt !== undefined ? { startedAt: st.startedAt } : {}),
  ...(st?.finishedAt !== undefined ? { finishedAt: st.finishedAt } : {}),
});

/** One member's state from the engine's answer and its attached CLI. */
export function memberState(m: Member, st: ContainerState | undefined, now: number): MemberState {
  const cli: GroupExit | undefined = m.group?.exitInfo();
  // the engine's answer may have been asked before the CLI ended: only a poll after the one that
  // first saw the CLI gone can tell "never started" from "ran and ended between the two"
  const cliEndedBefore = m.cliEndedSeenAt !== undefined;
  if (cli) m.cliEndedSeenAt ??= now;
  if (st) {
    m.seen = true;
    m.last = st;
    const times = timesOf(st);
    if (st.status === 'created') {
      // created but never running: the engine refused to start it (State.Error holds why), or the
      // attached CLI gave up on it; either way it will not start by itself
      if (st.error || (cli && cliEndedBefore))
        return { state: 'EXITED', code: null, error: startFailure(m, st, cli) };
      return { state: 'SUBMITTED' };
    }
    if (!ENDED.has(st.status)) return { state: 'RUNNING', ...times };
    m.endedAt ??= now;
    // the log is complete once the attached CLI ended (or it had DRAIN_MS to do so)
    if (m.group && !cli && now - m.endedAt < DRAIN_MS) return { state: 'RUNNING', ...times };
    if (m.group && !cli) m.group.killGroupNow();
    return {
      state: 'EXITED',
      code: st.exitCode,
      ...(st.oomKilled ? { error: 'the container was killed for lack of memory (OOMKilled)' } : {}),
      ...times,
    };
  }
  if (m.group && !cli) return { state: 'SUBMITTED' }; // the CLI is still creating it (image, engine)
  if (m.last && ENDED.has(m.last.status))
    return { state: 'EXITED', code: m.last.exitCode, ...timesOf(m.last) };
  if (m.seen) return { state: 'EXITED', code: null, error: `container ${m.name} disappeared` };
  const how = cli ? `exit ${cli.code ?? cli.signal ?? '?'}` : 'no attached client';
  return {
    state: 'EXITED',
    code: null,
    error: `container ${m.name} did not start (${how}); the engine's message is in the task log`,
  };
}

/** hints for the engine messages of a start that failed, by what the message says */
const START_HINTS: Array<[RegExp, string]> = [
  [
    /could not select device driver .*capabilities: \[\[gpu\]\]|nvidia-container-cli|unknown or invalid runtime name: nvidia/i,
    'this Docker engine has no NVIDIA runtime for GPU containers: install the NVIDIA Container Toolkit on the host, run `nvidia-ctk runtime configure --runtime=docker` and restart dockerd',
  ],
  [
    /error gathering device information|adding custom device|no such device/i,
    'a --device path does not exist on that host: check the devices in the backend extra_args or the recipe',
  ],
];

/** `container X on H could not start: <engine message> (hint)` */
function startFailure(m: Member, st: ContainerState, cli: GroupExit | undefined): string {
  const where = m.host ? ` on ${m.host}` : '';
  const why =
    st.error ||
    `the attached ${cli ? `client ended (exit ${cli.code ?? cli.signal ?? '?'})` : 'client is gone'} before it ran; the engine's message is in the task log`;
  const hint = START_HINTS.find(([re]) => re.test(why))?.[1];
  return `container ${m.name}${where} could not start: ${why.trim()}${hint ? ` — ${hint}` : ''}`;
}

export const isRunning = (st: ContainerState | undefined): boolean => Boolean(st && RUNNING.has(st.status));

function signalName(n: number): string | null {
  const hit = Object.entries(constants.signals).find(([, v]) => v === n);
  return hit ? hit[0] : null;
}

/**
 * The attempt's status from its members': a failed member fails it at once (the others are then
 * stopped by the caller); it completes when every member ended with 0. `stopped`: sflow stopped it,
 * so 128+N exit codes are reported as the signal N.
 */
export function taskStatus(states: MemberState[], stopped: boolean): HandleStatus {
  const failed = states.find((s) => s.state === 'EXITED' && (s.code !== 0 || s.error));
  const all = states.every((s) => s.state === 'EXITED');
  const pick = failed ?? (all ? states[0] : undefined);
  // the attempt started with its first container and ended with the one that decided it (a
  // failed member), or with the last one when all completed
  const starts = states.flatMap((s) => (s.startedAt !== undefined ? [s.startedAt] : []));
  const started = starts.length ? { startedAt: Math.min(...starts) } : {};
  if (pick && pick.state === 'EXITED') {
    const ends = (failed ? [failed] : states).flatMap((s) =>
      s.finishedAt !== undefined ? [s.finishedAt] : [],
    );
    const times = { ...started, ...(ends.length ? { endedAt: Math.max(...ends) } : {}) };
    const code = pick.code;
    if (stopped && code !== null && code > 128 && signalName(code - 128))
      return { state: 'EXITED', exit: { code: null, signal: signalName(code - 128) }, ...times };
    return {
      state: 'EXITED',
      exit: { code, signal: null },
      ...(pick.error && code === null ? { error: pick.error } : {}),
      ...times,
    };
  }
  const running = states.some((s) => s.state === 'RUNNING');
  return running ? { state: 'RUNNING', ...started } : { state: 'SUBMITTED' };
}

/** one inspect per endpoint for every member given */
export async function inspectMembers(
  engine: DockerEngine,
  members: Member[],
  signal: AbortSignal,
): Promise<Map<Member, ContainerState | undefined>> {
  const out = new Map<Member, ContainerState | undefined>();
  await Promise.all(
    [...byHost(members)].map(async ([host, names]) => {
      const got = await engine.inspect(host, names, signal);
      for (const m of members) if (m.host === host) out.set(m, got.get(m.name));
    }),
  );
  return out;
}
