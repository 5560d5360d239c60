/**
 * vitest globalSetup: make sure dist/ is a fresh build of src/ for tests that run the
 * compiled driver in a child `node` (signal handling, CLI). Builds only when some file under
 * src/ is newer than the last build's stamp; concurrent test runs wait on a lock instead of
 * building twice. A type error elsewhere does not stop the emit (tsc emits anyway).
 *
 * It also gives the run a private temp folder (TMPDIR, inherited by the test workers and every
 * process they start) and, at the end, fails the run loudly if anything is left in it: tests
 * clean up after themselves (test/helpers/scratch.ts). The index of live runs lives there too.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { privateTmp } from './helpers/private-tmp.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-stamp');
const lockDir = join(root, 'dist.build-lock');

function newestMtime(dir: string): number {
  let max = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) max = Math.max(max, newestMtime(p));
    else max = Math.max(max, statSync(p).mtimeMs);
  }
  return max;
}

function fresh(): boolean {
  if (!existsSync(stamp)) return false;
  const inputs = Math.max(
    newestMtime(join(root, 'src')),
    statSync(join(root, 'tsconfig.build.json')).mtimeMs,
  );
  return statSync(stamp).mtimeMs >= inputs;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function withLock<T>(fn: () => T): Promise<T> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch {
      // a lock left by a killed run goes stale after 3 minutes
      try {
        if (Date.now() - statSync(lockDir).mtimeMs > 180_000) rmdirSync(lockDir);
      } catch {
        /* gone meanwhile */
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockDir}`);
      await sleep(250);
    }
  }
  try {
    return fn();
  } finally {
    rmdirSync(lockDir);
  }
}

/**
 * Positional filters of `vitest run <filters…>`; when every one of them points into a folder
 * whose tests never start the compiled driver, the build is skipped (keeps unit runs fast).
 */
function onlyInProcessTests(): boolean {
  const i = process.argv.findIndex((a) => a === 'run' || a === 'watch' || a === 'dev');
  const filters = process.argv.slice(i + 1).filter((a) => !a.startsWith('-'));
  if (i < 0 || filters.length === 0) return false;
  return filters.every((f) => /^(\.\/)?test\/(unit|conformance)(\/|$)/.test(f));
}

export default async function setup(): Promise<() => void> {
  const checkTmp = privateTmp({ checkLeft: true });
  try {
    if (!onlyInProcessTests() && !fresh()) await build();
  } catch (e) {
    checkTmp();
    throw e;
  }
  return checkTmp;
}

async function build(): Promise<void> {
  await withLock(() => {
    if (fresh()) return; // another run built it while we waited
    const started = Date.now();
    try {
      execFileSync(
        process.execPath,
        [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')],
        {
          cwd: root,
          stdio: 'pipe',
        },
      );
    } catch {
      // type errors still emit JavaScript; only a missing output is fatal
    }
    if (!existsSync(join(root, 'dist', 'runtime', 'session.js')))
      throw new Error('build produced no dist/runtime/session.js');
    // the CLI users run is the bundle (bin/sflow.js prefers it when it is not older than dist/)
    execFileSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { cwd: root, stdio: 'pipe' });
    writeFileSync(stamp, new Date(started).toISOString() + '\n');
    // dated at the build's start, so sources edited during the build count as newer
    utimesSync(stamp, new Date(started), new Date(started));
  });
}
