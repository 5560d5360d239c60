#!/usr/bin/env node
// Thin launcher. `npm install` (prepare → npm run build) compiles src/ into dist/ with tsc and
// bundles the CLI into dist/bundle/ (scripts/bundle.mjs), which starts much faster than loading
// dist/'s ~100 small modules. The bundle is used unless it is missing or older than dist/'s
// compile (a tsc-only rebuild), in which case dist/cli/main.js runs instead.
// `sflow --help` and `--version` alone are answered here (see rootHelp, version).
// SFLOW_DEBUG_ENTRY=1 prints the entry that was loaded (or the file that answered) to stderr.
import { readFileSync, statSync } from 'node:fs';
import module from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const BUNDLE = '../dist/bundle/main.js';
const COMPILED = '../dist/cli/main.js';
// `sflow --help` as that bundle prints it 80 columns wide (scripts/bundle.mjs writes it after main.js)
const ROOT_HELP = '../dist/bundle/root-help-80.txt';

function mtime(rel) {
  try {
    return statSync(new URL(rel, import.meta.url)).mtimeMs;
  } catch {
    return undefined;
  }
}

function chooseEntry() {
  const bundled = mtime(BUNDLE);
  if (bundled === undefined) return COMPILED;
  const compiled = mtime(COMPILED);
  return compiled !== undefined && compiled > bundled ? COMPILED : BUNDLE;
}

function notBuilt(err, entry) {
  return err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes(entry.slice(3));
}

// Node 22.1+: V8's compiled code of the modules below is kept on disk between starts
// ($NODE_COMPILE_CACHE, else <tmp>/node-compile-cache); Node 20 has no such cache and skips this.
try {
  module.enableCompileCache?.();
} catch {
  // a cache that cannot be opened only costs speed
}

/**
 * `sflow --help` / `-h` prints the bundle's own help text without loading the command table, where
 * commander would format it 80 columns wide (stdout not a terminal, or an 80-column one) and the
 * text is at least as new as the bundle; anything else goes through the CLI as usual.
 */
function rootHelp(entry) {
  const args = process.argv.slice(2);
  if (entry !== BUNDLE || args.length !== 1 || (args[0] !== '--help' && args[0] !== '-h')) return false;
  const width = (process.stdout.isTTY ? process.stdout.columns : undefined) ?? 80;
  if (width !== 80) return false;
  const written = mtime(ROOT_HELP);
  if (written === undefined || written < mtime(BUNDLE)) return false;
  let text;
  try {
    text = readFileSync(new URL(ROOT_HELP, import.meta.url), 'utf8');
  } catch {
    return false;
  }
  if (process.env.SFLOW_DEBUG_ENTRY === '1')
    process.stderr.write(`sflow entry: ${fileURLToPath(new URL(ROOT_HELP, import.meta.url))}\n`);
  // `sflow --help | head`: a reader that goes away is not an error
  process.stdout.on('error', (e) => {
    if (e.code !== 'EPIPE' && e.code !== 'EIO') throw e;
  });
  process.stdout.write(text);
  return true;
}

/**
 * `sflow --version` / `-V` prints what the CLI's versionText() prints (src/cli/version.ts; a test
 * compares the two) without loading the command table.
 */
function version() {
  const args = process.argv.slice(2);
  if (args.length !== 1 || (args[0] !== '--version' && args[0] !== '-V')) return false;
  let v = '0.0.0'; // as src/util/version.ts where package.json cannot be read
  let name = 'sflow-cli'; // PACKAGE_NAME of src/util/version.ts (the package.json name)
  try {
    ({ version: v, name } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')));
  } catch {
    // keep 0.0.0
  }
  if (process.env.SFLOW_DEBUG_ENTRY === '1')
    process.stderr.write(`sflow entry: ${fileURLToPath(import.meta.url)}\n`);
  const lines = [
    `sflow ${v}`,
    `  npm package: ${name}`,
    `  node: ${process.version} (${process.platform}-${process.arch})`,
    `  bin: ${process.argv[1] ?? 'sflow'}`,
    `  package: ${dirname(dirname(fileURLToPath(import.meta.url)))}`,
  ];
  process.stdout.on('error', (e) => {
    if (e.code !== 'EPIPE' && e.code !== 'EIO') throw e;
  });
  process.stdout.write(lines.join('\n') + '\n');
  return true;
}

function start(entry) {
  if (process.env.SFLOW_DEBUG_ENTRY === '1')
    process.stderr.write(`sflow entry: ${fileURLToPath(new URL(entry, import.meta.url))}\n`);
  import(entry).then(
    (m) => m.main(process.argv),
    (err) => {
      if (notBuilt(err, entry)) {
        process.stderr.write(
          'sflow is not built yet: run `npm install` (or `npm run build`) in the sflow checkout.\n',
        );
        process.exit(1);
      }
      throw err;
    },
  );
}

const entry = chooseEntry();
if (!rootHelp(entry) && !version()) start(entry);
