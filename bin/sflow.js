#!/usr/bin/env node
// Thin launcher. `npm install` (prepare → npm run build) compiles src/ into dist/ with tsc and
// bundles the CLI into dist/bundle/ (scripts/bundle.mjs), which starts much faster than loading
// dist/'s ~100 small modules. The bundle is used unless it is missing or older than dist/'s
// compile (a tsc-only rebuild), in which case dist/cli/main.js runs instead.
// SFLOW_DEBUG_ENTRY=1 prints the entry that was loaded to stderr.
import { statSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

const BUNDLE = '../dist/bundle/main.js';
const COMPILED = '../dist/cli/main.js';

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

const entry = chooseEntry();
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
