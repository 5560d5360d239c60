/**
 * The shipped CLI: `npm run build` bundles dist/cli/main.js into dist/bundle/ (scripts/bundle.mjs)
 * and bin/sflow.js loads that bundle, falling back to dist/cli/main.js when the bundle is missing
 * or older than tsc's output. SFLOW_DEBUG_ENTRY=1 makes the launcher name its entry on stderr.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import module from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { scratchDir } from '../helpers/scratch.js';
import { BIN, REPO } from '../helpers/cli.js';
import { onlyRunDir, taskLog } from '../helpers/run-dir.js';

const BUNDLE_DIR = join(REPO, 'dist', 'bundle');
const BUNDLE_MAIN = join(BUNDLE_DIR, 'main.js');
const COMPILED_MAIN = join(REPO, 'dist', 'cli', 'main.js');
const ROOT_HELP = join(BUNDLE_DIR, 'root-help-80.txt');
const HELLO = join(REPO, 'examples', 'hello.yaml');
const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

const scratch = (prefix = 'sflow-build-') => scratchDir(prefix);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function node(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Run {
  const r = spawnSync(process.execPath, args, {
    cwd,
    env: { ...process.env, NO_COLOR: '1', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** `node bin/sflow.js …` from `cwd`, with the launcher naming its entry. */
function sflow(args: string[], cwd: string, bin = BIN): Run {
  return node([bin, ...args], cwd, { SFLOW_DEBUG_ENTRY: '1' });
}

function entryOf(r: Run): string | undefined {
  return /^sflow entry: (.+)$/m.exec(r.stderr)?.[1];
}

/** Runs sflow with a module-load hook; returns the files (paths) the ES module loader loaded. */
function loadedFiles(args: string[], cwd: string): { run: Run; files: string[] } {
  const dir = scratch('sflow-load-');
  const log = join(dir, 'loaded.txt');
  writeFileSync(
    join(dir, 'hooks.mjs'),
    "import { appendFileSync } from 'node:fs';\n" +
      'export async function load(url, context, next) {\n' +
      "  if (url.startsWith('file:')) appendFileSync(process.env.SFLOW_TEST_LOAD_LOG, url + '\\n');\n" +
      '  return next(url, context);\n}\n',
  );
  writeFileSync(
    join(dir, 'register.mjs'),
    "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n",
  );
  const run = node(['--import', join(dir, 'register.mjs'), BIN, ...args], cwd, { SFLOW_TEST_LOAD_LOG: log });
  const files = existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((u) => fileURLToPath(u))
    : [];
  return { run, files };
}

const mentionsZodOrYaml = (file: string) => /\$ZodObject|YAMLMap/.test(readFileSync(file, 'utf8'));

beforeAll(() => {
  // vitest's global setup rebuilds dist/ with tsc only; bring the bundle up to date with it
  const stale = !existsSync(BUNDLE_MAIN) || statSync(COMPILED_MAIN).mtimeMs > statSync(BUNDLE_MAIN).mtimeMs;
  if (stale)
    execFileSync(process.execPath, [join(REPO, 'scripts', 'bundle.mjs')], { cwd: REPO, stdio: 'pipe' });
}, 120_000);

describe('the bundled CLI', () => {
  it('dist/bundle/ holds the entry and its lazily loaded chunks, next to tsc output', () => {
    expect(existsSync(BUNDLE_MAIN)).toBe(true);
    expect(readdirSync(BUNDLE_DIR).filter((f) => f.endsWith('.js')).length).toBeGreaterThan(3);
    expect(existsSync(join(REPO, 'dist', 'runtime', 'session.js'))).toBe(true);
  });

  it('--version works from another cwd, answered by the launcher exactly as the CLI answers it', () => {
    const r = sflow(['--version'], scratch());
    expect(r.code, r.stderr).toBe(0);
    expect(entryOf(r)).toBe(BIN);
    expect(r.stdout).toContain(`sflow ${VERSION}\n`);
    expect(r.stdout).toContain(`package: ${REPO}\n`);
    expect(sflow(['-V'], scratch()).stdout).toBe(r.stdout);
    // the CLI's own versionText(), with the same argv[1]
    const own = node(
      [
        '--input-type=module',
        '-e',
        `(await import(${JSON.stringify(BUNDLE_MAIN)})).main(['node', 'sflow', '--version'])`,
        BIN,
      ],
      scratch(),
    );
    expect(own.code, own.stderr).toBe(0);
    expect(r.stdout).toBe(own.stdout);
  });

  it('a command goes through the bundle from another cwd', () => {
    const r = sflow(['schema', '--help'], scratch());
    expect(r.code, r.stderr).toBe(0);
    expect(entryOf(r)).toBe(BUNDLE_MAIN);
    expect(r.stdout).toContain('Usage: sflow schema');
  });

  it('--help is the text the bundle itself prints, read without loading the command table', () => {
    const { run, files } = loadedFiles(['--help'], scratch());
    expect(run.code, run.stderr).toBe(0);
    for (const cmd of ['run', 'compose', 'visualize', 'schema'])
      expect(run.stdout).toMatch(new RegExp(`^  ${cmd} `, 'm'));
    expect(files.filter((f) => f !== BIN)).toEqual([]);
    expect(entryOf(sflow(['-h'], scratch()))).toBe(ROOT_HELP);
    // commander's own rendering through the bundle, 80 columns (stdout is a pipe here too)
    const own = node(
      [
        '--input-type=module',
        '-e',
        `(await import(${JSON.stringify(BUNDLE_MAIN)})).main(['node', 'sflow', '--help'])`,
      ],
      scratch(),
    );
    expect(own.code, own.stderr).toBe(0);
    expect(run.stdout).toBe(own.stdout);
    expect(readFileSync(ROOT_HELP, 'utf8')).toBe(own.stdout);
  });

  it('a subcommand --help loads the command table, neither zod nor yaml', () => {
    const { run, files } = loadedFiles(['run', '--help'], scratch());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('--dry-run');
    const ours = files.filter((f) => f !== BIN);
    expect(ours.length).toBeGreaterThan(0);
    expect(
      ours.every((f) => f.startsWith(BUNDLE_DIR + '/')),
      ours.join('\n'),
    ).toBe(true);
    expect(ours.filter(mentionsZodOrYaml)).toEqual([]);
  });

  it('a --dry-run of examples/hello.yaml plans through the bundle and creates nothing', () => {
    const cwd = scratch();
    const { run, files } = loadedFiles(['run', '-f', HELLO, '--dry-run'], cwd);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Dry-run: hello');
    expect(run.stdout).toContain('prepare → greet');
    expect(readdirSync(cwd)).toEqual([]);
    expect(files).toContain(BUNDLE_MAIN);
    expect(
      files.filter((f) => f.startsWith(join(REPO, 'dist') + '/') && !f.startsWith(BUNDLE_DIR + '/')),
    ).toEqual([]);
    // the lazily loaded chunks carry the schema and YAML parser (control for the --help check)
    expect(files.some(mentionsZodOrYaml)).toBe(true);
  });

  it('runs examples/hello.yaml through the bundle (execa bundled in)', () => {
    const cwd = scratch();
    const r = sflow(['run', '-f', HELLO], cwd);
    expect(r.code, r.stderr).toBe(0);
    expect(entryOf(r)).toBe(BUNDLE_MAIN);
    const runDir = onlyRunDir(join(cwd, 'sflow_output'));
    expect(taskLog(runDir, 'greet')).toBe('hello world #1\nhello world #2\npreparing for world\n');
  });
});

// Node 22.1+ has module.enableCompileCache(); on Node 20 there is nothing to check
const compileCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

describe('the compile cache (Node 22.1+)', () => {
  it.skipIf(!compileCache)(
    `bin/sflow.js turns it on: the first run writes the bundle's code, the next one uses it${compileCache ? '' : ` (skipped: Node ${process.version} has no module.enableCompileCache)`}`,
    () => {
      const tmp = scratch('sflow-compile-cache-');
      // no NODE_COMPILE_CACHE: only the launcher's own enableCompileCache() can turn it on
      const env = { TMPDIR: tmp, NODE_COMPILE_CACHE: undefined, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' };
      const main = pathToFileURL(BUNDLE_MAIN).href;
      const first = node([BIN, 'run', '-f', HELLO, '--dry-run'], tmp, env);
      expect(first.code, first.stderr).toBe(0);
      // Node 24 says "for ESM file://…", Node 22 "for file://…"
      expect(first.stderr).toMatch(new RegExp(`writing cache for (ESM )?${main.replace(/[.]/g, '\\.')}`));
      expect(readdirSync(join(tmp, 'node-compile-cache')).length).toBeGreaterThan(0);
      const second = node([BIN, 'run', '-f', HELLO, '--dry-run'], tmp, env);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stderr).toMatch(
        new RegExp(`cache for (ESM )?${main.replace(/[.]/g, '\\.')} was accepted`),
      );
    },
  );
});

describe('bin/sflow.js picks its entry', () => {
  /** A package folder with its own copy of the launcher; dist/cli links to the real compiled CLI. */
  function fakePackage(): { root: string; bin: string } {
    const root = scratch('sflow-pkg-');
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'dist'));
    copyFileSync(BIN, join(root, 'bin', 'sflow.js'));
    return { root, bin: join(root, 'bin', 'sflow.js') };
  }
  /** A stand-in entry at dist/<sub>/main.js that only says which one ran. */
  function fakeEntry(root: string, sub: string, mtime: Date): string {
    mkdirSync(join(root, 'dist', sub));
    const main = join(root, 'dist', sub, 'main.js');
    writeFileSync(main, `export function main() { process.stdout.write('fake ${sub}\\n'); }\n`);
    utimesSync(main, mtime, mtime);
    return main;
  }

  it('says "not built yet" (exit 1) when neither the bundle nor dist/cli exists', () => {
    const { root, bin } = fakePackage();
    const r = sflow(['--help'], root, bin);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('sflow is not built yet: run `npm install`');
  });

  it('falls back to dist/cli/main.js without a bundle, and when the bundle is older', () => {
    const { root, bin } = fakePackage();
    symlinkSync(join(REPO, 'dist', 'cli'), join(root, 'dist', 'cli'));
    const compiled = join(root, 'dist', 'cli', 'main.js');
    let r = sflow(['run', '--help'], root, bin);
    expect(r.code, r.stderr).toBe(0);
    expect(entryOf(r)).toBe(compiled);
    expect(r.stdout).toContain('Usage: sflow run');

    fakeEntry(root, 'bundle', new Date(statSync(COMPILED_MAIN).mtimeMs - 60_000));
    r = sflow(['run', '--help'], root, bin);
    expect(entryOf(r)).toBe(compiled);
    expect(r.stdout).not.toContain('fake bundle');
  });

  it('uses the bundle when it is at least as new as dist/cli/main.js (npm tarballs: equal mtimes)', () => {
    const { root, bin } = fakePackage();
    const packed = new Date('1985-10-26T08:15:00Z');
    fakeEntry(root, 'cli', packed);
    const main = fakeEntry(root, 'bundle', packed);
    let r = sflow(['run', '--help'], root, bin);
    expect(r.code, r.stderr).toBe(0);
    expect(entryOf(r)).toBe(main);
    expect(r.stdout).toBe('fake bundle\n');

    utimesSync(main, new Date(packed.getTime() - 1000), new Date(packed.getTime() - 1000));
    r = sflow(['run', '--help'], root, bin);
    expect(r.stdout).toBe('fake cli\n');
  });

  it("prints the bundle's root help text only when it is at least as new as the bundle", () => {
    const { root, bin } = fakePackage();
    const packed = new Date('1985-10-26T08:15:00Z');
    fakeEntry(root, 'cli', packed);
    const main = fakeEntry(root, 'bundle', packed);
    const help = join(root, 'dist', 'bundle', 'root-help-80.txt');
    writeFileSync(help, 'Usage: fake help\n');
    utimesSync(help, packed, packed);
    let r = sflow(['--help'], root, bin);
    expect(r.code, r.stderr).toBe(0);
    expect(entryOf(r)).toBe(help);
    expect(r.stdout).toBe('Usage: fake help\n');
    // any other arguments go through the CLI
    expect(sflow(['--help', 'run'], root, bin).stdout).toBe('fake bundle\n');

    utimesSync(help, new Date(packed.getTime() - 1000), new Date(packed.getTime() - 1000));
    r = sflow(['--help'], root, bin);
    expect(entryOf(r)).toBe(main);
    expect(r.stdout).toBe('fake bundle\n');
  });
});
