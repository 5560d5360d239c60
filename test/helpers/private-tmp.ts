/**
 * The private temp folder of one test run (vitest globalSetup): `<tmp>/sflow-tests-<pid>-XXXXXX`,
 * root-owned and sticky like /tmp so tests acting as other users can use it, given to every
 * worker and every process they start through TMPDIR, with the run's own index of live runs and
 * Node's compile cache inside. A run killed before its teardown cannot remove its folder: the next
 * run removes the folders whose run is gone (its pid no longer lives).
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'sflow-tests-';
/** a folder of the old naming, without a pid: its run is taken as gone after this long */
const UNNAMED_STALE_MS = 60 * 60_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** remove the private temp folders of test runs that ended without their teardown */
export function sweepStaleRuns(parent = tmpdir()): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(PREFIX)) continue;
    const path = join(parent, name);
    const pid = /^sflow-tests-(\d+)-/.exec(name)?.[1];
    let stale: boolean;
    if (pid !== undefined) stale = !alive(Number(pid));
    else {
      try {
        stale = Date.now() - statSync(path).mtimeMs > UNNAMED_STALE_MS;
      } catch {
        continue;
      }
    }
    if (!stale) continue;
    rmSync(path, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}

/** total size of a folder tree in bytes (best effort) */
function du(p: string): number {
  try {
    const st = statSync(p);
    if (!st.isDirectory()) return st.size;
    return readdirSync(p).reduce((n, e) => n + du(join(p, e)), 0);
  } catch {
    return 0;
  }
}

/**
 * Make this run's folder and point TMPDIR, the run index and the compile cache at it. Returns the
 * teardown: it removes the folder; with `checkLeft`, it first fails the run (exit code 1) when
 * tests left anything in it.
 */
export function privateTmp({ checkLeft }: { checkLeft: boolean }): () => void {
  sweepStaleRuns();
  const dir = mkdtempSync(join(tmpdir(), `${PREFIX}${process.pid}-`));
  chmodSync(dir, 0o1777);
  process.env.TMPDIR = dir;
  // the index of live runs (runtime/live-runs.ts) of every sflow the tests start: this run's own,
  // so a run never recovers (stops, marks) another test run's killed drivers, nor the user's
  const runIndex = join(dir, 'sflow-run-index');
  process.env.SFLOW_RUN_INDEX_DIR = runIndex;
  // Node 22.1+: bin/sflow.js keeps V8's compiled code in $NODE_COMPILE_CACHE (else
  // <tmp>/node-compile-cache): one cache for the whole run, removed with the run index
  const compileCache = join(dir, 'node-compile-cache');
  process.env.NODE_COMPILE_CACHE = compileCache;
  return () => {
    rmSync(runIndex, { recursive: true, force: true });
    rmSync(compileCache, { recursive: true, force: true });
    let left: string[];
    try {
      left = readdirSync(dir);
    } catch {
      return;
    }
    if (checkLeft && left.length > 0) {
      const lines = left.map((e) => `  ${e} (${Math.ceil(du(join(dir, e)) / 1024)} KiB)`);
      process.stderr.write(
        `\n✗ tests left ${left.length} entr${left.length === 1 ? 'y' : 'ies'} in the temp folder ${dir} ` +
          `(every test must remove what it creates; use test/helpers/scratch.ts):\n${lines.join('\n')}\n`,
      );
      process.exitCode = 1;
    }
    rmSync(dir, { recursive: true, force: true });
  };
}
