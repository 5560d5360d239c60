/**
 * Removing a run's containers for good (backends.md §3.5 teardown). `removeMembers`: one `rm -f`
 * per endpoint, members marked `removed` only when the engine confirmed it (a call cut short by an
 * abort or a timeout leaves them for the next pass). `releaseMembers`, the end of every run
 * (success, failure, Ctrl-C, SIGTERM): remove, end the attached clients, wait for them briefly,
 * then look again by name and remove what is there — a `docker run` still creating its container
 * over a slow ssh connection when the first `rm` ran would otherwise leave it running. The names
 * are fixed before `docker run` is called, so no container id is ever needed. Bounded by the
 * caller's signal; whatever is still left is the next run's (reaping) or `sflow recover`'s.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DockerEngine } from '../container-engine.js';
import { byHost, type Member } from './members.js';

const GONE = /no such (container|object)/i;

/** `rm -f` of every member not yet removed; true when every one is confirmed gone */
export async function removeMembers(
  engine: DockerEngine,
  members: Member[],
  signal: AbortSignal,
): Promise<boolean> {
  const todo = members.filter((m) => !m.removed);
  await Promise.all(
    [...byHost(todo)].map(async ([host, names]) => {
      const r = await engine.rm(host, names, signal).catch(() => undefined);
      if (!r) return;
      // exit 0: all gone; otherwise the names it printed (removed) and the ones it did not find
      const out = new Set(r.stdout.split('\n').map((l) => l.trim()));
      const notFound = r.stderr.split('\n').filter((l) => GONE.test(l));
      const gone = (n: string) => r.ok || out.has(n) || notFound.some((l) => l.trim().endsWith(n));
      for (const m of todo) if (m.host === host && gone(m.name)) m.removed = true;
    }),
  );
  return todo.every((m) => m.removed);
}

/** how long the attached clients get to end once their containers are removed */
const CLIENT_WAIT_MS = 3_000;

export async function releaseMembers(
  engine: DockerEngine,
  members: Member[],
  signal: AbortSignal,
): Promise<void> {
  if (members.length === 0) return;
  await removeMembers(engine, members, signal);
  for (const m of members) m.group?.killGroupNow();
  const clients = members.flatMap((m) => (m.group ? [m.group.exited] : []));
  await Promise.race([Promise.all(clients), sleep(CLIENT_WAIT_MS, undefined, { ref: false })]);
  if (signal.aborted) return;
  // a second look by name: a create that was in flight when the first rm ran has landed by now
  for (const m of members) m.removed = false;
  await removeMembers(engine, members, signal);
}
