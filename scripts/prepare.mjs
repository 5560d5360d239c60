#!/usr/bin/env node
// `npm run prepare`: builds dist/ (npm run build) unless it is already up to date.
//
// npm runs `prepare` after `npm install` / `npm ci` in this checkout, and again whenever it
// installs this folder as a package — which is what the first `npx sflow` inside the checkout
// does (it links the folder into npm's cache and prepares it). Rebuilding there made the quick
// start's first `npx sflow` take ~50 s; now a fresh dist/ is left alone and that first call takes
// about as long as any other. dist/ is stale when dist/.build-stamp (written by `npm run build`)
// is missing or older than src/, the tsconfigs, scripts/bundle.mjs or package.json.
// SFLOW_FORCE_BUILD=1 always builds.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = join(ROOT, 'dist', '.build-stamp');
const OUTPUTS = ['dist/cli/main.js', 'dist/bundle/main.js'];
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'scripts/bundle.mjs', 'package.json'];

function newest(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const e of readdirSync(path)) max = Math.max(max, newest(join(path, e)));
  return max;
}

function upToDate() {
  if (process.env.SFLOW_FORCE_BUILD === '1') return false;
  if (!existsSync(STAMP) || OUTPUTS.some((o) => !existsSync(join(ROOT, o)))) return false;
  const built = statSync(STAMP).mtimeMs;
  return INPUTS.every((i) => newest(join(ROOT, i)) <= built);
}

if (upToDate()) {
  process.stderr.write(
    'sflow: dist/ is up to date with src/, skipping the build (SFLOW_FORCE_BUILD=1 forces it)\n',
  );
} else {
  const npm = process.env.npm_execpath;
  const r = npm
    ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: ROOT, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
