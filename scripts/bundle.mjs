#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js, built by tsc) into dist/bundle/ so `sflow` starts
// by loading a handful of files instead of ~100 small ES modules (ours + zod's + yaml's).
//
// - ESM with code splitting: every `await import(...)` in the CLI stays its own chunk, so
//   `sflow --help` loads only the entry (commander + the command table), never zod or yaml.
// - External: node builtins and packages that find files next to themselves at run time
//   (wasm, native addons, fonts): see EXTERNAL_PACKAGES below.
// - dist/ (tsc's one-file-per-module output) is left as it is; tests import from it.
// - Concurrency-safe: the bundle is written to a scratch folder, then moved into dist/bundle/
//   file by file (content-hashed chunks first, the fixed-name entry last, each by rename), so a
//   running `sflow` never sees a half-written file, and chunks of earlier builds that a running
//   process may still import lazily are only deleted once they are old.
//
// Run: node scripts/bundle.mjs   (npm run build runs it after tsc)
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = join(ROOT, 'dist', 'cli', 'main.js');
/** Root help text, printed by bin/sflow.js (see writeRootHelp). */
const ROOT_HELP = 'root-help-80.txt';
const OUT = join(ROOT, 'dist', 'bundle');
/** Chunks of earlier builds not produced by this one are deleted once older than this. */
const STALE_MS = 10 * 60 * 1000;

/** Packages left as imports of node_modules (with their subpaths). */
const EXTERNAL_PACKAGES = [
  '@hpcc-js/wasm-graphviz', // loads its wasm relative to itself
  '@resvg/resvg-js', // native addon
  '@duckdb/node-api', // native addon (sflow results)
  'dejavu-fonts-ttf', // font files resolved with require.resolve
  'react-devtools-core', // ink's optional dev-only peer (loaded only with DEV=true); not installed
];
// execa is bundled on purpose: it is imported by every `sflow run` and is ~130 small modules
// (with its dependencies), which alone cost ~0.2 s of CPU per run on a 2-core machine.

/**
 * commander requires node:child_process at load time for one rarely used feature (executable
 * subcommands, which sflow has none of); loading it (and net, dgram, … behind it) costs every
 * `sflow --help` ~5 ms. The require becomes a getter that loads it on first use.
 */
const COMMANDER_CHILD_PROCESS = "const childProcess = require('node:child_process');";
const lazyCommanderChildProcess = {
  name: 'sflow-lazy-commander-child-process',
  transform(code, id) {
    if (!/[\\/]commander[\\/]lib[\\/]command\.js$/.test(id)) return null;
    if (!code.includes(COMMANDER_CHILD_PROCESS)) {
      console.warn(
        'warning: commander changed; node:child_process stays eagerly loaded (scripts/bundle.mjs)',
      );
      return null;
    }
    return code.replace(
      COMMANDER_CHILD_PROCESS,
      "const childProcess = { get spawn() { return require('node:child_process').spawn; } };",
    );
  },
};

/**
 * Node's built-in `punycode` is deprecated: Node 22+ prints DEP0040 when code outside node_modules
 * requires it, and a bundle is such code (the Kubernetes client's node-fetch → whatwg-url → tr46
 * do). The bundle gets the userland copy (the npm package punycode, same API) instead.
 */
export const userlandPunycode = {
  name: 'sflow-userland-punycode',
  resolveId(id) {
    return id === 'punycode' ? fileURLToPath(import.meta.resolve('punycode/punycode.js')) : null;
  },
};

function isExternal(id) {
  if (id === 'punycode') return false; // userlandPunycode
  if (id.startsWith('node:') || builtinModules.includes(id)) return true;
  return EXTERNAL_PACKAGES.some((p) => id === p || id.startsWith(`${p}/`));
}

/** rolldown, or undefined (with a warning) where it cannot load, e.g. on Node older than it supports. */
async function loadRolldown() {
  try {
    return (await import('rolldown')).rolldown;
  } catch (e) {
    console.warn(
      `warning: rolldown could not be loaded (${e?.message ?? e}); no bundle built, ` +
        'sflow will start from dist/cli/main.js (slower start, same behaviour)',
    );
    return undefined;
  }
}

export async function bundle({ quiet = false } = {}) {
  if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run tsc -p tsconfig.build.json first`);
  const rolldown = await loadRolldown();
  if (!rolldown) return [];
  const t0 = Date.now();
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const scratch = mkdtempSync(join(ROOT, 'dist', '.bundle-tmp-'));
  try {
    const build = await rolldown({
      input: { main: ENTRY },
      platform: 'node',
      external: (id) => isExternal(id),
      logLevel: 'warn',
      plugins: [lazyCommanderChildProcess, userlandPunycode],
      // React's production build for the --tui chunk (the CLI's own code never reads NODE_ENV)
      transform: { define: { 'process.env.NODE_ENV': '"production"' } },
    });
    const { output } = await build.write({
      dir: scratch,
      format: 'esm',
      entryFileNames: '[name].js',
      chunkFileNames: '[name]-[hash].js',
      sourcemap: false,
    });
    await build.close();
    const files = [...output.map((o) => o.fileName), writeRootHelp(scratch)];
    install(scratch, files);
    if (!quiet) {
      const chunks = output.filter((o) => o.type === 'chunk').length;
      console.log(`bundled dist/cli/main.js into dist/bundle/ (${chunks} chunks) in ${Date.now() - t0} ms`);
    }
    return files;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * `sflow --help` as the new bundle prints it to a pipe or file (80 columns, commander's width when
 * stdout is not a terminal), written after main.js so it is at least as new: bin/sflow.js prints
 * it for `sflow --help` / `-h` where the width would be 80, without loading the command table.
 */
function writeRootHelp(scratch) {
  const entry = pathToFileURL(join(scratch, 'main.js')).href;
  const text = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `(await import(${JSON.stringify(entry)})).main(['node', 'sflow', '--help'])`,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  writeFileSync(join(scratch, ROOT_HELP), text);
  return ROOT_HELP;
}

/** Move the new files into dist/bundle/, entries last; drop old leftovers. */
function install(scratch, files) {
  mkdirSync(OUT, { recursive: true });
  const entries = files.filter((f) => f === 'main.js' || f === ROOT_HELP);
  for (const f of [...files.filter((f) => !entries.includes(f)), ...entries]) {
    mkdirSync(dirname(join(OUT, f)), { recursive: true });
    renameSync(join(scratch, f), join(OUT, f));
  }
  const keep = new Set(files);
  const now = Date.now();
  for (const name of readdirSync(OUT)) {
    if (keep.has(name)) continue;
    const p = join(OUT, name);
    try {
      if (now - statSync(p).mtimeMs > STALE_MS) rmSync(p, { recursive: true, force: true });
    } catch {
      /* removed by a concurrent build */
    }
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  bundle().catch((e) => {
    console.error(`bundle failed: ${e?.message ?? e}`);
    process.exit(1);
  });
}
