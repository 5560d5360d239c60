/**
 * The single executable (`npm run build:exe` → dist/sflow-linux-<arch>) where no Node.js is on the
 * PATH: here with a PATH of /usr/bin minus node/npm/npx, and over ssh as the fixture's account
 * whose login shell has no Node.js. --version, a dry-run and a local run of examples/hello.yaml;
 * the embedded files (monitor collector, fonts + resvg for PNG) are used from the unpacked copy.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../../helpers/cli.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { EXE, NODE_24, VERSION, ensureExecutable, node24 } from './exe-helpers.js';

const HELLO = join(REPO, 'examples', 'hello.yaml');
const dir = mkdtempSync(join(tmpdir(), 'sflow-exe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(() => void ensureExecutable(), 300_000);

describe('single executable on a PATH without Node.js', () => {
  const nonode = join(dir, 'bin');
  // the run index in this file's folder (removed after it), not in /tmp or the run's temp folder
  const env = () => ({
    PATH: nonode,
    HOME: dir,
    TMPDIR: tmpdir(),
    SFLOW_RUN_INDEX_DIR: join(dir, 'run-index'),
    SFLOW_CACHE_DIR: join(dir, 'cache'),
    NO_COLOR: '1',
  });
  const exe = (args: string[], cwd = dir) =>
    spawnSync(EXE, args, { cwd, env: env(), encoding: 'utf8', timeout: 120_000 });

  beforeAll(() => {
    mkdirSync(nonode);
    for (const f of readdirSync('/usr/bin'))
      if (!['node', 'nodejs', 'npm', 'npx', 'corepack'].includes(f))
        symlinkSync(join('/usr/bin', f), join(nonode, f));
  });

  it('has no node on that PATH', () => {
    const r = spawnSync('/bin/sh', ['-c', 'command -v node || echo no-node'], {
      env: env(),
      encoding: 'utf8',
    });
    expect(r.stdout.trim()).toBe('no-node');
  });

  it('--version, a dry-run and a local run of the sample, a PNG, a monitored run', () => {
    const v = exe(['--version']);
    expect(v.status, v.stderr).toBe(0);
    // the executable embeds the pinned Node 24 (scripts/node-dist.mjs), not the Node that built it
    expect(v.stdout).toContain(`sflow ${VERSION}\n  npm package: sflow-cli\n  node: v${NODE_24} (linux-`);
    expect(v.stdout).toMatch(new RegExp(`package: ${join(dir, 'cache', 'exe')}/${VERSION}-[0-9a-f]{12}`));
    const dry = exe(['run', '-f', HELLO, '--dry-run']);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/✓ Configuration is valid/);
    const run = exe(['run', '-f', HELLO, '--enable-workflow-monitor']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/✓ Workflow completed/);
    const runDir = /Output folder: (\S+)/.exec(run.stdout)![1];
    expect(readFileSync(join(runDir, 'greet', 'greet.log'), 'utf8')).toMatch(/hello world #2/);
    expect(readFileSync(join(runDir, 'report.html'), 'utf8')).toMatch(/uPlot/); // uPlot inlined
    expect(existsSync(join(runDir, 'sflow_monitor.log'))).toBe(true); // the sh collector was found
    const png = exe(['visualize', '-f', HELLO, '--format', 'png', '-o', join(dir, 'g.png')]);
    expect(png.status, png.stderr).toBe(0);
    expect(readFileSync(join(dir, 'g.png')).subarray(1, 4).toString()).toBe('PNG');
    // recover loads every backend kind (the Kubernetes client's optional requires): no Node warning
    const rec = exe(['recover']);
    expect(rec.status, rec.stderr).toBe(0);
    expect(rec.stderr).not.toMatch(/Warning|require\(\)/);
  });

  it("--version and --help alone are answered without loading the CLI, with the CLI's own text", () => {
    const fast = (args: string[]) =>
      spawnSync(EXE, args, { cwd: dir, env: { ...env(), SFLOW_DEBUG_ENTRY: '1' }, encoding: 'utf8' });
    const v = fast(['--version']);
    expect([v.status, v.stderr]).toEqual([0, 'sflow entry: executable (version)\n']);
    expect(fast(['-V']).stdout).toBe(v.stdout);
    // the CLI in the same bundle, run outside the executable on the same unpacked files, by the
    // same Node (24) the executable embeds
    const root = /^ {2}package: (\S+)/m.exec(v.stdout)![1];
    const bundle = join(REPO, 'dist', 'sea', 'sflow.cjs');
    const cli = (args: string[]) =>
      spawnSync(node24(), [bundle, ...args], {
        cwd: dir,
        env: { ...env(), SFLOW_SEA_ROOT: root, SFLOW_DEBUG_ENTRY: '1' },
        encoding: 'utf8',
      });
    const own = cli(['--version']);
    expect([own.status, own.stderr]).toEqual([0, 'sflow entry: executable (cli)\n']);
    expect(v.stdout).toBe(own.stdout.replace(`  bin: ${bundle}\n`, `  bin: ${EXE}\n`));
    const h = fast(['--help']);
    expect([h.status, h.stderr]).toEqual([0, 'sflow entry: executable (help)\n']);
    expect(fast(['-h']).stdout).toBe(h.stdout);
    const ownHelp = cli(['--help']);
    expect(ownHelp.status, ownHelp.stderr).toBe(0);
    expect(h.stdout).toBe(ownHelp.stdout);
    expect(h.stdout).toMatch(/^Usage: sflow /);
    // anything else still goes through the CLI
    expect(fast(['schema', '--help']).stderr).toBe('sflow entry: executable (cli)\n');
  });

  it('--tui on a terminal is refused by name (the live view is not in the executable)', () => {
    // `script` gives the run a terminal, so the live view would be chosen
    const cmd = `${EXE} run -f ${HELLO} --tui`;
    const cwd = join(dir, 'tui');
    mkdirSync(cwd);
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], {
      cwd,
      env: env(),
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(
      /Not supported in this version: the full-screen live view \(--tui\) is not in the single executable/,
    );
    // refused before anything is written: no run folder
    expect(existsSync(join(cwd, 'sflow_output'))).toBe(false);
  });

  it('sflow results says the DuckDB engine is not in the executable, and where to get it', () => {
    const cwd = join(dir, 'results');
    mkdirSync(join(cwd, 'sflow_results'), { recursive: true });
    writeFileSync(join(cwd, 'sflow_results', 'results.parquet'), '');
    const r = exe(['results', 'query', 'SELECT 1'], cwd);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /Not supported in this version: sflow results needs the DuckDB engine, which the single executable does not carry\n.*npm install --global sflow-cli/,
    );
    expect(r.stderr).not.toMatch(/Internal error/);
  });
});

// arm64: built by `npm run build:exe` (Node and resvg for arm64 come from the npm registry); checked
// here only where it was built and qemu-user with the arm64 C library is installed
const QEMU = '/usr/bin/qemu-aarch64';
const ARM64 = join(REPO, 'dist', 'sflow-linux-arm64');
const armReady = existsSync(QEMU) && existsSync('/usr/aarch64-linux-gnu/lib') && existsSync(ARM64);
describe.skipIf(!armReady)('arm64 single executable under qemu-user', () => {
  it('prints its version and dry-runs the sample', () => {
    const env = { ...process.env, SFLOW_CACHE_DIR: join(dir, 'arm-cache') };
    const run = (args: string[]) =>
      spawnSync(QEMU, ['-L', '/usr/aarch64-linux-gnu', ARM64, ...args], {
        env,
        encoding: 'utf8',
        timeout: 120_000,
      });
    expect(run(['--version']).stdout).toMatch(/\(linux-arm64\)/);
    expect(run(['run', '-f', HELLO, '--dry-run']).stdout).toMatch(/✓ Configuration is valid/);
  });
});

const ssh = engine('ssh');
describeWithEngines('single executable over ssh, account without Node.js', [ssh], () => {
  const dest = () => `${ssh.get('SFLOW_TEST_SSH_NONODE_USER')}@${ssh.get('SFLOW_TEST_SSH_ALIAS_A')}`;
  const remote = (cmd: string, input?: Buffer) =>
    spawnSync('ssh', ['-F', ssh.get('SFLOW_TEST_SSH_CONFIG'), dest(), cmd], {
      input,
      encoding: 'utf8',
      timeout: 120_000,
      maxBuffer: 1 << 24,
    });
  let rdir = '';
  beforeAll(() => {
    rdir = remote('mktemp -d').stdout.trim();
    expect(rdir).toMatch(/^\/tmp\//);
    expect(remote(`cat > ${rdir}/sflow && chmod 755 ${rdir}/sflow`, readFileSync(EXE)).status).toBe(0);
    expect(remote(`cat > ${rdir}/hello.yaml`, readFileSync(HELLO)).status).toBe(0);
  }, 120_000);
  afterAll(() => {
    if (rdir) remote(`rm -rf ${rdir}`);
  });

  it('runs --version, a dry-run and the sample in a login shell whose PATH has no node', () => {
    const env = `SFLOW_CACHE_DIR=${rdir}/cache`;
    const r = remote(
      `bash -lc 'command -v node || echo no-node; cd ${rdir} && ${env} ./sflow --version && ${env} ./sflow run -f hello.yaml --dry-run | tail -n 1 && ${env} ./sflow run -f hello.yaml'`,
    );
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('no-node');
    expect(lines[1]).toBe(`sflow ${VERSION}`);
    expect(r.stdout).toMatch(/✓ Configuration is valid/);
    expect(r.stdout).toMatch(/\[greet\] hello world #2|✓ Workflow completed/);
    expect(r.stdout).toMatch(/✓ Workflow completed/);
    const whoRan = execFileSync(
      'ssh',
      ['-F', ssh.get('SFLOW_TEST_SSH_CONFIG'), dest(), `ls ${rdir}/sflow_output`],
      { encoding: 'utf8' },
    );
    expect(whoRan).toMatch(/^hello-/);
  });
});
