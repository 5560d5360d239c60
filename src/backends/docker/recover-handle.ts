/**
 * `Backend.recover` for Docker: the containers a dead driver's handle names (with their hosts) —
 * running ones are stopped (TERM, grace, KILL; or killed at once), then every one that is left is
 * removed. `found` says whether something still ran.
 */
import type { RecoverOutcome, StopOptions, StopOutcome } from '../backend.js';
import type { DockerEngine } from '../container-engine.js';
import { byHost, inspectMembers, isRunning, type Member } from './members.js';

export async function recoverMembers(
  engine: DockerEngine,
  members: Member[],
  opts: StopOptions,
  signal: AbortSignal,
): Promise<RecoverOutcome> {
  const states = await inspectMembers(engine, members, signal);
  const existing = members.filter((m) => states.get(m));
  const running = existing.filter((m) => isRunning(states.get(m)) || states.get(m)?.status === 'created');
  if (existing.length === 0)
    return { found: false, detail: `no container left (${members.map((m) => m.name).join(', ')})` };
  let stop: StopOutcome | undefined;
  if (running.length) {
    const t0 = Date.now();
    await Promise.all(
      [...byHost(running)].map(([host, names]) =>
        opts.force ? engine.kill(host, names, signal) : engine.stop(host, names, opts.graceMs, signal),
      ),
    );
    const after = await inspectMembers(engine, running, signal);
    stop = {
      signals: opts.force ? ['SIGKILL'] : ['SIGTERM'],
      gone: !running.some((m) => isRunning(after.get(m))),
      alreadyGone: false,
      elapsedMs: Date.now() - t0,
    };
  }
  await Promise.all([...byHost(existing)].map(([host, names]) => engine.rm(host, names, signal)));
  const names = existing.map((m) => m.name).join(', ');
  return running.length
    ? { found: true, ...(stop ? { stop } : {}), detail: `stopped and removed ${names}` }
    : { found: false, detail: `removed ended container(s) ${names}` };
}
