#!/usr/bin/env node
// The npm tarball users install (`npm install -g sflow-cli`), packed with `npm pack` from a staging
// folder that holds only what an installed sflow reads:
//
// - bin/sflow.js, the bundle's files that dist/bundle/main.js reaches (chunks of earlier builds
//   that scripts/bundle.mjs keeps for running processes are left out), assets/ without the test
//   fakes (assets/test-bin), docs/, README.md, CHANGELOG.md;
// - package.json without the scripts and devDependencies a user never runs (npm warns about a
//   `prepare` script on every global install), and npm-shrinkwrap.json: package-lock.json without
//   the dev-only entries, so users get the dependency tree the tests ran with, not whatever newer
//   transitive versions the registry has that day.
//
//   node scripts/pack.mjs [--out DIR]     # prints the tarball's path (default DIR: the current one)
//
// It needs a fresh build (npm run build) and no network. Used by scripts/release.mjs and by
// test/release/release.test.ts.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BUNDLE = join(ROOT, 'dist', 'bundle');

/** package.json fields a published package keeps */
const KEEP = ['name', 'version', 'description', 'type', 'license', 'bin', 'engines', 'dependencies'];

/** dist/bundle/main.js and every chunk it imports, statically or lazily (file names) */
export function bundleFiles() {
  const seen = new Set();
  const walk = (file) => {
    if (seen.has(file)) return;
    const path = join(BUNDLE, file);
    if (!existsSync(path)) throw new Error(`dist/bundle/${file} is missing: run npm run build`);
    seen.add(file);
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (/^\s*(\*|\/\/|\/\*)/.test(line)) continue; // commander's JSDoc names ./argument.js too
      for (const m of line.matchAll(/(?:\bfrom|\bimport\(?)\s*["']\.\/([\w.-]+\.js)["']/g)) walk(m[1]);
    }
  };
  walk('main.js');
  return [...seen, 'root-help-80.txt'].sort();
}

function cleanPackageJson(pkg) {
  const out = {};
  for (const k of KEEP) if (pkg[k] !== undefined) out[k] = pkg[k];
  return out;
}

/** package-lock.json as the shrinkwrap of the published package: no dev-only entries */
function shrinkwrap(lock, pkg) {
  const packages = {};
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (entry.dev) continue;
    if (path === '') {
      const { devDependencies: _dev, ...root } = entry;
      packages[path] = { ...root, name: pkg.name, version: pkg.version };
    } else packages[path] = entry;
  }
  return { ...lock, name: pkg.name, version: pkg.version, packages };
}

/** Stages the package and runs `npm pack` there; returns the tarball's absolute path. */
export function packTarball(outDir) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  if (lock.packages?.['']?.version !== pkg.version)
    throw new Error('package-lock.json is out of step with package.json: run npm install');
  const stage = mkdtempSync(join(tmpdir(), 'sflow-pack-'));
  try {
    const copy = (rel, filter) =>
      cpSync(join(ROOT, rel), join(stage, rel), { recursive: true, filter, preserveTimestamps: true });
    copy('bin');
    copy('assets', (src) => !src.startsWith(join(ROOT, 'assets', 'test-bin')));
    copy('docs');
    for (const f of ['README.md', 'CHANGELOG.md']) copy(f);
    for (const f of bundleFiles()) copy(join('dist', 'bundle', f));
    writeFileSync(join(stage, 'package.json'), JSON.stringify(cleanPackageJson(pkg), null, 2) + '\n');
    writeFileSync(join(stage, 'npm-shrinkwrap.json'), JSON.stringify(shrinkwrap(lock, pkg), null, 2) + '\n');
    mkdirSync(outDir, { recursive: true });
    const out = execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', outDir, '--silent'], {
      cwd: stage,
      encoding: 'utf8',
      timeout: 120_000,
    });
    const tgz = join(outDir, out.trim().split('\n').pop());
    if (!existsSync(tgz)) throw new Error(`npm pack did not write ${tgz}`);
    return tgz;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const out = resolve(i > 0 ? process.argv[i + 1] : '.');
  try {
    process.stdout.write(`${packTarball(out)}\n`);
  } catch (e) {
    process.stderr.write(`pack: ${e?.message ?? e}\n`);
    process.exit(1);
  }
}
