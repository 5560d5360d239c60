/**
 * Entry of the single executable (`npm run build:exe` → dist/sflow-linux-<arch>): Node's
 * single-executable-application support runs this file, bundled with the whole CLI into one
 * CommonJS script by scripts/build-exe.mjs.
 *
 * On the first start it unpacks the files it carries (assets/, uPlot, a font, resvg's native
 * addon: see payload.ts) into a cache folder laid out like an npm install of sflow
 * (`package.json`, `assets/`, `node_modules/…`), once per build. The bundle's `import.meta.url`
 * is rewritten at build time to `globalThis.__sflowSeaUrl`, a file inside that folder, so every
 * lookup the CLI makes relative to itself (version, assets, fonts, uPlot, resvg) finds the
 * unpacked copy, exactly as in a checkout or an npm install.
 *
 * Cache folder: $SFLOW_CACHE_DIR, else $XDG_CACHE_HOME/sflow, else ~/.cache/sflow, else
 * $TMPDIR/sflow-<uid>; inside it `exe/<version>-<payload id>/`.
 *
 * `--version` / `-V` and `--help` / `-h` alone are answered here without loading the CLI, as
 * bin/sflow.js answers them: the version text is versionText()'s (src/cli/version.ts), the help
 * text the executable's own commander output, 80 columns wide, captured at build time
 * (scripts/build-exe.mjs, asset `root-help-80`) and used where commander would print 80 columns.
 * SFLOW_DEBUG_ENTRY=1 says on stderr which one answered.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as sea from 'node:sea';
import { errorMessage, errorStack } from '../util/errors.js';
import { PACKAGE_NAME } from '../util/package-name.js';
import { unpackPayload } from './payload.js';

declare global {
  var __sflowSeaUrl: string | undefined;
}

function cacheBases(env: NodeJS.ProcessEnv): string[] {
  const bases: string[] = [];
  if (env.SFLOW_CACHE_DIR) bases.push(env.SFLOW_CACHE_DIR);
  else {
    if (env.XDG_CACHE_HOME) bases.push(join(env.XDG_CACHE_HOME, 'sflow'));
    try {
      bases.push(join(homedir(), '.cache', 'sflow'));
    } catch {
      /* no home */
    }
  }
  bases.push(join(tmpdir(), `sflow-${process.getuid?.() ?? 'user'}`));
  return bases;
}

/** The unpacked install folder, unpacking it first when this build has not been unpacked yet. */
function installRoot(): string {
  const id = sea.getAsset('payload-id', 'utf8').trim();
  const errors: string[] = [];
  for (const base of cacheBases(process.env)) {
    const root = join(base, 'exe', id);
    if (existsSync(join(root, 'package.json'))) return root;
    let scratch: string | undefined;
    try {
      mkdirSync(join(base, 'exe'), { recursive: true, mode: 0o700 });
      scratch = mkdtempSync(join(base, 'exe', `.unpack-${id}-`));
      unpackPayload(new Uint8Array(sea.getAsset('payload')), scratch);
      try {
        renameSync(scratch, root);
      } catch (e) {
        // another sflow unpacked the same build meanwhile: use theirs
        if (!existsSync(join(root, 'package.json'))) throw e;
        rmSync(scratch, { recursive: true, force: true });
      }
      return root;
    } catch (e) {
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      errors.push(`${base}: ${errorMessage(e)}`);
    }
  }
  process.stderr.write(
    `✗ sflow could not unpack its files: ${errors.join('; ')}\n  hint: set SFLOW_CACHE_DIR to a writable folder with ~30 MB free\n`,
  );
  process.exit(1);
}

/**
 * Node warns once when the bundle's `require` is asked for a module that is not built in. The
 * bundle makes such calls only for optional dependencies it guards (the Kubernetes client's), so
 * the warning says nothing the user can act on: that one is dropped, every other is kept.
 */
function quietOptionalRequireWarning(): void {
  // Node prints warnings from its own 'warning' listener; this one replaces it, same format
  const printers = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (w: Error) => {
    if (/require\(\) provided to the main script embedded into single-executable/.test(w.message)) return;
    for (const print of printers) print(w);
  });
}

function debugEntry(what: string): void {
  if (process.env.SFLOW_DEBUG_ENTRY === '1') process.stderr.write(`sflow entry: ${what}\n`);
}

function writeOut(text: string): void {
  // `sflow --help | head`: a reader that goes away is not an error
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE' && e.code !== 'EIO') throw e;
  });
  process.stdout.write(text);
}

/** versionText() of src/cli/version.ts, for the install folder `root` (its package.json) */
function versionText(root: string): string {
  let v = '0.0.0'; // as src/util/version.ts where package.json cannot be read
  let name = PACKAGE_NAME;
  try {
    ({ version: v, name } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      version: string;
      name: string;
    });
  } catch {
    // keep 0.0.0
  }
  return [
    `sflow ${v}`,
    `  npm package: ${name}`,
    `  node: ${process.version} (${process.platform}-${process.arch})`,
    `  bin: ${process.argv[1] ?? 'sflow'}`,
    `  package: ${root}`,
  ].join('\n');
}

/** `--version` and `--help` alone: answered without the CLI; false for anything else */
function fastAnswer(root: string): boolean {
  const args = process.argv.slice(2);
  // outside the executable (SFLOW_SEA_ROOT: build-exe.mjs, tests) the CLI answers, for comparison
  if (args.length !== 1 || !sea.isSea()) return false;
  if (args[0] === '--version' || args[0] === '-V') {
    debugEntry('executable (version)');
    writeOut(versionText(root) + '\n');
    return true;
  }
  if (args[0] !== '--help' && args[0] !== '-h') return false;
  const width = (process.stdout.isTTY ? process.stdout.columns : undefined) ?? 80;
  if (width !== 80) return false;
  let text: string;
  try {
    text = sea.getAsset('root-help-80', 'utf8');
  } catch {
    return false; // an executable built without it: the CLI answers
  }
  debugEntry('executable (help)');
  writeOut(text);
  return true;
}

async function start(): Promise<void> {
  quietOptionalRequireWarning();
  const root = sea.isSea() ? installRoot() : process.env.SFLOW_SEA_ROOT;
  if (!root) throw new Error('the single-executable entry runs only inside the executable');
  if (fastAnswer(root)) return;
  debugEntry('executable (cli)');
  globalThis.__sflowSeaUrl = pathToFileURL(join(root, 'dist', 'sea', 'sflow.cjs')).href;
  // in the executable process.argv is [exe, exe, ...args] like [node, script, ...args]
  const { main } = await import('../cli/main.js');
  await main(process.argv);
}

start().catch((e: unknown) => {
  process.stderr.write(`${errorStack(e)}\n`);
  process.exit(1);
});
