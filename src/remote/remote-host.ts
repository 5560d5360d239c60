/**
 * Getting the remote host ready: one probe (OS, CPU, the remote root, an sflow on PATH, the cached
 * executables, free space), then a matching sflow — the same version on the remote PATH, else the
 * cached copy of this very build, else this build's single executable copied into
 * `<remote root>/bin/` (to a temporary name, checked by running it, then renamed: a failed copy
 * leaves nothing behind). Nothing of a run exists remotely until every check passed.
 */
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getAsset, isSea } from 'node:sea';
import { SflowError } from '../util/sflow-error.js';
import { VERSION } from '../util/version.js';
import { shCommand, shQuote, type SshTarget } from './ssh-target.js';
import { sshCall, sshFailure, sshOk } from './ssh-call.js';
import { DEFAULT_REMOTE_ROOT } from './session-layout.js';
import { PACKAGE_NAME } from '../util/package-name.js';

export interface RemoteHost {
  /** absolute remote root */
  root: string;
  arch: 'x64' | 'arm64';
  /** absolute path of the remote sflow to run */
  sflow: string;
  /** how it was found */
  how: 'path' | 'cache' | 'copied';
}

/** The shell expression of the remote root: `~/x` and relative paths are under the remote $HOME. */
export function rootExpr(root: string | undefined): string {
  const r = root ?? DEFAULT_REMOTE_ROOT;
  if (r.startsWith('/')) return shQuote(r);
  const rest = r.replace(/^~\/?/, '');
  return rest ? `"$HOME"/${shQuote(rest)}` : '"$HOME"';
}

function preflightError(code: string, message: string, hint?: string): SflowError {
  return new SflowError(code, message, { phase: 'preflight', hint });
}

function archOf(uname: string): 'x64' | 'arm64' | undefined {
  if (/^(x86_64|amd64)$/.test(uname)) return 'x64';
  if (/^(aarch64|arm64)$/.test(uname)) return 'arm64';
  return undefined;
}

/** This installation's single executable for `arch`, with its build id; undefined when there is none. */
export function localExecutable(arch: string): { path: string; id: string } | undefined {
  if (isSea() && process.platform === 'linux' && process.arch === arch)
    return { path: process.execPath, id: getAsset('payload-id', 'utf8').trim() };
  // SFLOW_EXE_DIR: where to find sflow-linux-<arch> instead of this installation's dist/
  const dirs = process.env.SFLOW_EXE_DIR ? [process.env.SFLOW_EXE_DIR] : [];
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5 && dirs.length === 0; i++, dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      dirs.push(join(dir, 'dist'));
      break;
    }
  }
  for (const d of dirs) {
    const path = join(d, `sflow-linux-${arch}`);
    if (!existsSync(path)) continue;
    let id: string;
    try {
      id = readFileSync(`${path}.id`, 'utf8').trim();
    } catch {
      id = `${VERSION}-${Math.round(statSync(path).mtimeMs).toString(36)}`;
    }
    return { path, id };
  }
  return undefined;
}

function parseProbe(out: string): Record<string, string> {
  const kv: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const m = /^([a-z_]+)=(.*)$/.exec(line.trim());
    if (m) kv[m[1]] = m[2];
  }
  return kv;
}

export async function prepareRemote(
  t: SshTarget,
  rootOpt: string | undefined,
  say: (s: string) => void,
): Promise<RemoteHost> {
  // one line, commands separated by ';' (the login shell may be csh; no '!' either)
  const probe = [
    'umask 077',
    `R=${rootExpr(rootOpt)}`,
    'mkdir -p "$R/runs" "$R/bin" || exit 3',
    'R=$(cd "$R" && pwd -P) || exit 3',
    'echo "root=$R"; echo "os=$(uname -s)"; echo "arch=$(uname -m)"',
    'S=$(command -v sflow 2>/dev/null); if [ -n "$S" ]; then echo "path_sflow=$S"; echo "path_version=$("$S" --version 2>/dev/null | head -n 1)"; fi',
    'echo "cached=$(ls "$R/bin" 2>/dev/null | tr "\\n" " ")"',
    'echo "free_kb=$(df -Pk "$R" | tail -n 1 | awk "{print \\$4}")"',
  ].join('; ');
  const r = await sshCall(t, shCommand(probe), { timeoutMs: 60_000, what: 'the connection check' });
  if (r.code === 3)
    throw preflightError(
      'remote.root_unusable',
      `cannot use the remote root ${rootOpt ?? `~/${DEFAULT_REMOTE_ROOT}`} on ${t.destination}: ${r.stderr.trim().split('\n').pop()}`,
      'give a writable folder with --ssh-remote-root',
    );
  if (r.code !== 0 || r.timedOut) throw sshFailure(t, r, 'the connection check');
  const kv = parseProbe(r.stdout);
  if (kv.os !== 'Linux')
    throw preflightError(
      'remote.os',
      `${t.destination} runs ${kv.os || 'an unknown OS'}: sflow runs remotely on Linux only`,
    );
  const arch = archOf(kv.arch ?? '');
  if (!arch)
    throw preflightError(
      'remote.arch',
      `${t.destination} has a ${kv.arch} CPU: sflow executables exist for x86_64 and aarch64`,
    );
  const root = kv.root;
  say(`connected to ${t.destination} (linux-${arch}); remote root ${root}`);
  if (kv.path_sflow && kv.path_version === `sflow ${VERSION}`)
    return { root, arch, sflow: kv.path_sflow, how: 'path' };
  const local = localExecutable(arch);
  const name = local ? `sflow-${local.id}-linux-${arch}` : undefined;
  if (name && (kv.cached ?? '').split(' ').includes(name))
    return { root, arch, sflow: `${root}/bin/${name}`, how: 'cache' };
  if (!local || !name)
    throw preflightError(
      'remote.no_sflow',
      `${t.destination} has no sflow ${VERSION}${kv.path_version ? ` (its PATH has ${kv.path_version})` : ''}, and there is no single executable for linux-${arch} here to copy`,
      `download sflow-linux-${arch} of release ${VERSION} and set SFLOW_EXE_DIR to its folder (in a checkout: npm run build:exe), or install it on the remote PATH (npm install --global ${PACKAGE_NAME}@${VERSION})`,
    );
  const size = statSync(local.path).size;
  const freeKb = Number(kv.free_kb);
  if (Number.isFinite(freeKb) && freeKb * 1024 < size + 64 * 1024 * 1024)
    throw preflightError(
      'remote.disk_full',
      `the remote disk is full: ${root} on ${t.destination} has ${Math.floor(freeKb / 1024)} MB free, copying sflow needs ${Math.ceil(size / 1e6) + 64} MB`,
      'free space on the remote, or point --ssh-remote-root at a filesystem with room',
    );
  say(`copying sflow (${(size / 1e6).toFixed(0)} MB, linux-${arch}) to ${root}/bin/ (once per build)`);
  const dest = `${root}/bin/${name}`;
  const script = [
    `T=${shQuote(`${root}/bin/.upload-${name}`)}-$$`,
    'trap \'rm -f "$T"\' EXIT',
    'cat > "$T" || exit 4',
    'chmod 755 "$T"',
    '"$T" --version > /dev/null 2> "$T.err" || { cat "$T.err" >&2; rm -f "$T.err"; exit 5; }',
    'rm -f "$T.err"',
    `mv -f "$T" ${shQuote(dest)}`,
  ].join('; ');
  const up = await sshCall(t, shCommand(script), {
    timeoutMs: 15 * 60_000,
    input: createReadStream(local.path),
    what: 'copying sflow',
  });
  if (up.code === 5)
    throw preflightError(
      'remote.exe_broken',
      `the sflow executable copied to ${t.destination} does not run there: ${up.stderr.trim().split('\n').slice(-2).join(' / ')}`,
      'the remote may have an older C library than this build needs; install sflow there instead',
    );
  if (up.code !== 0 || up.timedOut) throw sshFailure(t, up, 'copying sflow');
  return { root, arch, sflow: dest, how: 'copied' };
}

/** Remove a session folder whose run never started (bounded, best effort). */
export async function removeUnstarted(t: SshTarget, session: string): Promise<void> {
  await sshOk(
    t,
    shCommand(
      `if [ -e ${shQuote(session)}/state/supervisor.pid ]; then exit 0; fi; rm -rf ${shQuote(session)}`,
    ),
    {
      timeoutMs: 30_000,
      what: 'cleaning up',
    },
  ).catch(() => undefined);
}
