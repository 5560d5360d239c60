/**
 * The release as users get it: `npm run release` once into a scratch folder, then each thing it
 * publishes checked the way a user meets it — the checksums, what the npm tarball holds, the
 * tarball installed into an empty global prefix and run from a folder outside the checkout, `npx
 * --package`, and the x64 executable with nothing on PATH.
 *
 * `npm run test:release` (vitest.release.config.ts); .ci/run runs it once. Not part of `npm test`:
 * it builds both executables and installs the package (minutes). npm works from its cache: the
 * tarball's npm-shrinkwrap.json pins the versions `npm ci` put there, so the registry is reached
 * only for a dependency the cache lacks. Every child is bounded; a failure names its step.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO as ROOT } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch.js';

const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};
const TARBALL = `${PKG.name}-${PKG.version}.tgz`;
const EXES = ['sflow-linux-x64', 'sflow-linux-arm64'];

/**
 * The environment a user's shell gives a command: no npm_* variables from the `npm run` that
 * started vitest (npm_config_prefix among them would redirect a global install), no NODE_OPTIONS.
 */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^npm_/i.test(k) && k !== 'NODE_OPTIONS' && k !== 'INIT_CWD') env[k] = v;
  return { ...env, NO_COLOR: '1', ...extra };
}

/** run one step; on a non-zero exit or a timeout, fail naming the step with its output */
function step(
  what: string,
  cmd: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd,
    env: opts.env ?? userEnv(),
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 120_000,
    killSignal: 'SIGKILL',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error || r.status !== 0)
    throw new Error(
      `${what} failed (${r.error ? r.error.message : `exit ${r.status}${r.signal ? `, ${r.signal}` : ''}`}): ` +
        `${cmd} ${args.join(' ')}\n--- stdout\n${r.stdout?.slice(-4000)}\n--- stderr\n${r.stderr?.slice(-4000)}`,
    );
  return r;
}

let out = '';

beforeAll(() => {
  out = scratchDir('sflow-release-');
  // what the build needs beyond `npm ci`: the pinned Node 24 for both arches, arm64's resvg
  step('fetching the pinned Node 24 binaries', process.execPath, ['scripts/node-dist.mjs', 'fetch-all'], {
    cwd: ROOT,
    timeoutMs: 600_000,
  });
  step('npm run release', 'npm', ['run', 'release', '--', '--out', out], {
    cwd: ROOT,
    env: userEnv({ npm_config_offline: 'true' }),
    timeoutMs: 1_200_000,
  });
}, 1_500_000);

describe('npm run release', () => {
  it('writes the tarball, both executables, the notes and SHA256SUMS, which sha256sum -c accepts', () => {
    expect(readdirSync(out).sort()).toEqual(['RELEASE-NOTES.md', 'SHA256SUMS', TARBALL, ...EXES].sort());
    const sums = readFileSync(join(out, 'SHA256SUMS'), 'utf8').trim().split('\n');
    const listed = new Map(sums.map((l) => [l.slice(66), l.slice(0, 64)]));
    expect([...listed.keys()].sort()).toEqual(['RELEASE-NOTES.md', TARBALL, ...EXES].sort());
    for (const [file, sum] of listed)
      expect(
        createHash('sha256')
          .update(readFileSync(join(out, file)))
          .digest('hex'),
        file,
      ).toBe(sum);
    const check = step('sha256sum -c', 'sha256sum', ['-c', 'SHA256SUMS'], { cwd: out });
    expect(check.stdout.match(/: OK$/gm)?.length).toBe(listed.size);
    // the notes are this version's section of the changelog
    const notes = readFileSync(join(out, 'RELEASE-NOTES.md'), 'utf8');
    expect(notes.split('\n')[0]).toMatch(new RegExp(`^## \\[?v?${PKG.version.replace(/\./g, '\\.')}`));
    expect(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8')).toContain(notes.trim());
  });

  it('the tarball holds what an installed sflow reads, and nothing from tests, sources or build scripts', () => {
    const tgz = join(out, TARBALL);
    const list = step('listing the tarball', 'tar', ['-tzf', tgz], { cwd: out })
      .stdout.split('\n')
      .filter(Boolean)
      .map((p) => p.replace(/^package\//, ''));
    console.log(`release: ${TARBALL} is ${(statSync(tgz).size / 1e6).toFixed(2)} MB, ${list.length} files`);
    for (const must of [
      'bin/sflow.js',
      'dist/bundle/main.js',
      'package.json',
      'npm-shrinkwrap.json',
      'README.md',
    ])
      expect(list, must).toContain(must);
    const bad = list.filter(
      (p) =>
        /^(test|src|scripts|bench|\.ci|\.stryker-tmp|reports|coverage)\//.test(p) ||
        /(^|\/)(fixtures|test-bin)\//.test(p) ||
        /\.map$/.test(p) ||
        (/\.ts$/.test(p) && !/\.d\.ts$/.test(p)),
    );
    expect(bad).toEqual([]);
    const pkg = JSON.parse(
      step('reading package.json from the tarball', 'tar', ['-xzOf', tgz, 'package/package.json'], {
        cwd: out,
      }).stdout,
    ) as Record<string, unknown>;
    expect(pkg.name).toBe(PKG.name);
    expect(pkg.version).toBe(PKG.version);
    expect(pkg.bin).toEqual({ sflow: 'bin/sflow.js' });
    expect(pkg.scripts).toBeUndefined();
    expect(pkg.devDependencies).toBeUndefined();
  });
});

describe('the tarball installed as a user installs it', () => {
  it('npm install --global into an empty prefix: --version, sample, dry-run, a real run, upgrade --dry-run', () => {
    const prefix = scratchDir('sflow-prefix-');
    const elsewhere = scratchDir('sflow-user-');
    step(
      'npm install --global',
      'npm',
      [
        'install',
        '--global',
        '--prefix',
        prefix,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        join(out, TARBALL),
      ],
      {
        cwd: elsewhere,
        timeoutMs: 600_000,
      },
    );
    const bin = join(prefix, 'bin');
    expect(existsSync(join(bin, 'sflow'))).toBe(true);
    const env = userEnv({ PATH: `${bin}:${process.env.PATH ?? ''}`, npm_config_prefix: prefix });
    const sflow = (what: string, args: string[]) => step(what, 'sflow', args, { cwd: elsewhere, env });
    expect(sflow('sflow --version', ['--version']).stdout).toContain(PKG.version);
    sflow('sflow sample', ['sample', 'self_contained/local/hello_world']);
    expect(existsSync(join(elsewhere, 'hello_world.yaml'))).toBe(true);
    const dry = sflow('sflow run --dry-run', ['run', '-f', 'hello_world.yaml', '--dry-run']);
    expect(dry.stdout).toContain('hello');
    const run = sflow('sflow run', ['run', '-f', 'hello_world.yaml', '-s', 'WHO=release']);
    expect(run.stdout).toContain('Workflow completed');
    const runs = readdirSync(join(elsewhere, 'sflow_output'));
    expect(runs).toHaveLength(1);
    const log = readFileSync(join(elsewhere, 'sflow_output', runs[0] ?? '', 'hello', 'hello.log'), 'utf8');
    expect(log).toContain('Hello, release!');
    // an installed copy upgrades itself, and only ever to this package
    const up = sflow('sflow upgrade --dry-run', ['upgrade', '--dry-run']);
    expect(up.stdout).toContain(`${PKG.name}@latest`);
    expect(up.stdout).not.toMatch(/ sflow@/);
  });

  it('npx --package ./tarball sflow --version, from an unrelated folder', () => {
    const elsewhere = scratchDir('sflow-npx-');
    const npxCache = join(homedir(), '.npm', '_npx');
    const before = new Set(existsSync(npxCache) ? readdirSync(npxCache) : []);
    try {
      const r = step(
        'npx --package',
        'npx',
        ['--yes', '--prefer-offline', '--package', join(out, TARBALL), 'sflow', '--version'],
        {
          cwd: elsewhere,
          timeoutMs: 600_000,
        },
      );
      expect(r.stdout).toContain(PKG.version);
    } finally {
      // what npx left in npm's cache for this tarball
      if (existsSync(npxCache))
        for (const d of readdirSync(npxCache))
          if (!before.has(d)) rmSync(join(npxCache, d), { recursive: true, force: true });
    }
  });
});

describe('the single executable', () => {
  it('x64 runs with an empty PATH: --version, a sample and its dry-run', () => {
    const exe = join(out, 'sflow-linux-x64');
    const elsewhere = scratchDir('sflow-exe-');
    // nothing on PATH; the run's own temp folder and run index, so nothing lands in the real /tmp
    const env = {
      HOME: elsewhere,
      PATH: '',
      NO_COLOR: '1',
      TMPDIR: process.env.TMPDIR ?? '',
      SFLOW_RUN_INDEX_DIR: process.env.SFLOW_RUN_INDEX_DIR ?? '',
    };
    const v = step('the executable --version', exe, ['--version'], { cwd: elsewhere, env });
    expect(v.stdout).toContain(PKG.version);
    step('the executable sample', exe, ['sample', 'self_contained/local/hello_world'], {
      cwd: elsewhere,
      env,
    });
    const dry = step('the executable dry-run', exe, ['run', '-f', 'hello_world.yaml', '--dry-run'], {
      cwd: elsewhere,
      env,
    });
    expect(dry.stdout).toContain('hello');
    // the arm64 one is an ELF for aarch64 (it cannot run here)
    const head = readFileSync(join(out, 'sflow-linux-arm64')).subarray(0, 20);
    expect(head.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    expect(head.readUInt16LE(18)).toBe(183); // EM_AARCH64
  });
});
