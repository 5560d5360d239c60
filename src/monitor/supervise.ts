/**
 * The one supervision of a collector process, whichever launcher started it (this host, an srun
 * step, an ssh session). Collectors that need no pipe to the driver (this host, an srun step) are
 * started as task attempts are (`startCollectorGroup`: through the launcher, so its lifeline stops
 * them when the driver dies, SIGKILL included); the ssh collector streams its samples back on
 * ssh's stdout, is spawned detached here, and dies with the driver by end of file on its stdin.
 * `stop` runs the launcher's own polite step (`beforeStop`: close ssh's stdin and wait a while),
 * then the group's TERM → grace → KILL (`stopGroup`), then `afterStop`.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnGroup } from '../util/process-group.js';
import { stopGroup, trackGroup, untrackGroup } from '../util/terminate/index.js';

/**
 * A collector command in its own process group through the launcher (stdin /dev/null, stdout and
 * stderr appended to `logPath`); returns its `stop` (TERM → grace → KILL, idempotent).
 */
export async function startCollectorGroup(o: {
  argv: string[];
  env: NodeJS.ProcessEnv;
  logPath: string;
  graceMs: number;
}): Promise<() => Promise<void>> {
  const g = await spawnGroup({ argv: o.argv, env: o.env, logPath: o.logPath, graceMs: o.graceMs, cwd: '/' });
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= g.stop(o.graceMs).then(() => undefined);
    return stopping;
  };
}

export interface SuperviseOptions {
  /** SIGTERM → SIGKILL grace of the group stop */
  graceMs: number;
  /** the event that means "gone": 'exit' (default) or 'close' (the driver reads its stdout) */
  goneOn?: 'exit' | 'close';
  /** runs first in `stop`, given the promise of that event */
  beforeStop?: (gone: Promise<void>) => Promise<void>;
  /** runs last in `stop` */
  afterStop?: (gone: Promise<void>) => Promise<void>;
}

/** Watches `child` from now on; returns its `stop` (idempotent). */
export function superviseCollector(child: ChildProcess, o: SuperviseOptions): () => Promise<void> {
  // the driver's exit hook (util/terminate/cleanup.ts) SIGKILLs the group until it is known gone
  const pgid = child.pid;
  if (pgid !== undefined) trackGroup(pgid, 'monitor collector');
  const gone = new Promise<void>((resolve) => {
    const done = () => {
      if (pgid !== undefined) untrackGroup(pgid);
      resolve();
    };
    child.once(o.goneOn ?? 'exit', done);
    child.once('error', done);
  });
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= (async () => {
      await o.beforeStop?.(gone);
      if (pgid !== undefined) {
        await stopGroup(pgid, { graceMs: o.graceMs, leaderExit: gone });
        untrackGroup(pgid);
      }
      await o.afterStop?.(gone);
    })();
    return stopping;
  };
}
