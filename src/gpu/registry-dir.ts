/**
 * The registry directory is trusted only when no other unprivileged user can change what is in it
 * behind our back (threat model in README, "GPU reservation registry"):
 *
 * - the directory itself is not a symbolic link, is a directory, and is owned by us or by root;
 * - if anyone besides its owner may write to it, it has the sticky bit (others can then add their
 *   own records but cannot delete or replace ours);
 * - every directory above it passes the same owner and sticky checks (so nobody can swap it out).
 *
 * A missing registry directory is created private (0700) — never is an existing one chmod-ed. Users
 * who want to share one registry set up a root-owned sticky directory (see README).
 */
import { lstatSync, mkdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { errorCode } from '../util/errors.js';

const STICKY = 0o1000;
const GROUP_OR_OTHER_WRITE = 0o022;

const myUid = (): number | null => (typeof process.getuid === 'function' ? process.getuid() : null);

const SETUP_HINT =
  'point SFLOW_GPU_RESERVATION_DIR at a directory of your own (runs of other users then do not see your ' +
  'claims), or have an administrator create a shared one: `install -d -o root -m 1777 /var/lib/sflow-gpu` ' +
  '(or `-g <group> -m 3770` for one group) and set SFLOW_GPU_RESERVATION_DIR to it';

function unsafe(dir: string, why: string): SflowError {
  return new SflowError('GPU_REGISTRY_UNSAFE', `GPU reservation registry ${dir} is not safe to use: ${why}`, {
    phase: 'run',
    hint: SETUP_HINT,
  });
}

/** why a directory with this owner and mode lets another user tamper with its entries, or null */
function problem(st: Pick<Stats, 'uid' | 'mode'>, what: string): string | null {
  const me = myUid();
  if (me !== null && st.uid !== me && st.uid !== 0)
    return `${what} is owned by another user (uid ${st.uid}), who could delete or replace its records`;
  if ((st.mode & GROUP_OR_OTHER_WRITE) !== 0 && (st.mode & STICKY) === 0) {
    const mode = (st.mode & 0o7777).toString(8).padStart(4, '0');
    return `${what} is writable by other users (mode ${mode}) without the sticky bit, so they could delete its records`;
  }
  return null;
}

/** every directory above `dir`, top first: as written, and again as the real path they resolve to */
function ancestors(dir: string): string[] {
  const chain = (p: string): string[] => {
    const out: string[] = [];
    for (let a = path.dirname(p); ; a = path.dirname(a)) {
      out.unshift(a);
      if (path.dirname(a) === a) return out;
    }
  };
  let real: string[] = [];
  try {
    real = chain(path.join(realpathSync(path.dirname(dir)), 'x'));
  } catch {
    // checked lexically only
  }
  return [...new Set([...chain(dir), ...real])];
}

/** Throws GPU_REGISTRY_UNSAFE unless `dir` (which exists) is one nobody else can subvert. */
export function checkRegistryDir(dir: string): void {
  const st = lstatSync(dir);
  if (st.isSymbolicLink()) throw unsafe(dir, 'it is a symbolic link (another user may have planted it)');
  if (!st.isDirectory()) throw unsafe(dir, 'it is not a directory');
  const own = problem(st, 'it');
  if (own) throw unsafe(dir, own);
  for (const a of ancestors(dir)) {
    // a symbolic link on the way must be ours or root's (its target is checked as a real path too)
    const l = lstatSync(a);
    const why = l.isSymbolicLink()
      ? problem({ uid: l.uid, mode: 0 }, `the symbolic link above it, ${a},`)
      : problem(statSync(a), `the directory above it, ${a},`);
    if (why) throw unsafe(dir, why);
  }
}

/**
 * Make sure the registry directory exists and is safe; creates a missing one (and missing parents)
 * private to this user. Never changes the mode of an existing directory.
 */
export function openRegistryDir(dir: string): string {
  const abs = path.resolve(dir);
  try {
    mkdirSync(path.dirname(abs), { recursive: true, mode: 0o700 });
    mkdirSync(abs, { mode: 0o700 });
  } catch (e) {
    const code = errorCode(e);
    if (code !== 'EEXIST') {
      throw new SflowError('GPU_REGISTRY_UNSAFE', `cannot create GPU reservation registry ${abs}: ${code}`, {
        phase: 'run',
        hint: SETUP_HINT,
      });
    }
  }
  try {
    checkRegistryDir(abs);
  } catch (e) {
    if (e instanceof SflowError) throw e;
    throw unsafe(abs, `cannot inspect it (${errorCode(e) ?? String(e)})`);
  }
  return abs;
}
