#!/usr/bin/env node
// `npm run release`: everything a release publishes, in release/<version>/ (git-ignored):
//
//   sflow-cli-<version>.tgz   the npm package (scripts/pack.mjs: what `npm publish` would upload)
//   sflow-linux-x64           the single executables, Node 24 inside (scripts/build-exe.mjs)
//   sflow-linux-arm64
//   RELEASE-NOTES.md          this version's section of CHANGELOG.md
//   SHA256SUMS                of the four files above, as `sha256sum -c SHA256SUMS` checks them
//
//   npm run release [-- --out DIR]
//
// No network: it builds from this checkout (dist/ is rebuilt only when src/ is newer, as
// `npm run prepare` does), packs with `npm pack` from a staging folder, and takes the pinned Node 24
// binaries and arm64's resvg from the build cache (`node scripts/node-dist.mjs fetch-all` fills it
// once; where it has not run, the build fetches them from the npm registry first and says so).
// It fails when CHANGELOG.md has no section for the version, or when either executable is not built.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packTarball } from './pack.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const ARCHES = ['x64', 'arm64'];

const log = (s) => console.log(`release: ${s}`);

/** The `## <version>` section of CHANGELOG.md (heading included), or undefined. */
export function changelogSection(text, version) {
  const lines = text.split('\n');
  const esc = version.replace(/\./g, '\\.');
  const start = lines.findIndex((l) => new RegExp(`^## \\[?v?${esc}\\]?(\\s|$)`).test(l));
  if (start < 0) return undefined;
  let end = lines.findIndex((l, i) => i > start && /^## /.test(l));
  if (end < 0) end = lines.length;
  return lines.slice(start, end).join('\n').trim() + '\n';
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');
const mb = (file) => {
  const n = statSync(file).size;
  return n < 1e6 ? `${(n / 1e3).toFixed(1)} kB` : `${(n / 1e6).toFixed(1)} MB`;
};

function run(script, env = {}) {
  execFileSync(process.execPath, [join(ROOT, 'scripts', script)], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, ...env },
    timeout: 15 * 60_000,
  });
}

function main() {
  const i = process.argv.indexOf('--out');
  const out = resolve(i > 0 ? process.argv[i + 1] : join(ROOT, 'release', PKG.version));
  const notes = changelogSection(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'), PKG.version);
  if (!notes)
    throw new Error(`CHANGELOG.md has no "## ${PKG.version}" section: write the release notes first`);
  const t0 = Date.now();
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });

  run('prepare.mjs'); // builds dist/ unless it is up to date with src/
  const tgz = packTarball(out);
  log(`${relative(ROOT, tgz)}: ${mb(tgz)}`);

  const built = Date.now() - 1000;
  run('build-exe.mjs', { SFLOW_EXE_ARCH: ARCHES.join(',') });
  const files = [basename(tgz)];
  for (const arch of ARCHES) {
    const exe = join(ROOT, 'dist', `sflow-linux-${arch}`);
    // an executable of an earlier build left in dist/ is not this release's
    if (!existsSync(exe) || statSync(exe).mtimeMs < built)
      throw new Error(`dist/sflow-linux-${arch} was not built (see build:exe above)`);
    copyFileSync(exe, join(out, basename(exe)));
    files.push(basename(exe));
  }
  writeFileSync(join(out, 'RELEASE-NOTES.md'), notes);
  files.push('RELEASE-NOTES.md');

  const sums = files.map((f) => `${sha256(join(out, f))}  ${f}\n`).join('');
  writeFileSync(join(out, 'SHA256SUMS'), sums);
  for (const f of files) log(`  ${f} ${mb(join(out, f))}`);
  log(
    `wrote ${relative(ROOT, out) || out}/ (check: cd ${out} && sha256sum -c SHA256SUMS) in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (e) {
    console.error(`release failed: ${e?.message ?? e}`);
    process.exit(1);
  }
}
