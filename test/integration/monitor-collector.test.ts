/**
 * The collector script for real, under `sh` and `dash`: raw CSV layouts, ERROR rows, custom
 * commands, clean stop on TERM (its custom commands too), exit when its driver is gone.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/cli.js';

const SCRIPT = join(REPO, 'assets', 'sh', 'monitor-collector.sh');
const FAKE_BIN = join(REPO, 'assets', 'test-bin');
const root = mkdtempSync(join(tmpdir(), 'sflow-collector-'));
const started: ChildProcess[] = [];
afterAll(() => {
  for (const c of started)
    if (c.pid && c.exitCode === null && c.signalCode === null) {
      try {
        process.kill(c.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  rmSync(root, { recursive: true, force: true });
});
let n = 0;
const fresh = () => join(root, `d${++n}`);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
async function until(what: string, cond: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const lines = (dir: string, scope: string) =>
  readFileSync(join(dir, `${scope}_monitor_node_0_testhost.log`), 'utf8')
    .trim()
    .split('\n');

const SHELLS = ['sh', 'dash'].filter((s) => spawnSync('sh', ['-c', `command -v ${s}`]).status === 0);

describe.each(SHELLS)('monitor-collector.sh under %s', (shell) => {
  it('writes the five raw files with the documented columns', () => {
    const dir = fresh();
    const r = spawnSync(
      shell,
      [SCRIPT, '--interval-ms', '100', '--out-dir', dir, '--host', 'testhost', '--max-ticks', '4'],
      { env: { ...process.env, PATH: `${FAKE_BIN}:${process.env.PATH}` }, encoding: 'utf8', timeout: 20_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const ts = /^\d{10}\.\d{3}$/;
    const gpu = lines(dir, 'gpu');
    expect(gpu[0]).toBe(
      '#fields=index,utilization.gpu,utilization.memory,temperature.gpu,temperature.memory,power.draw,clocks.sm,clocks.mem,memory.total,memory.used',
    );
    const row = gpu[1].split(',');
    expect(row).toHaveLength(11);
    expect(row[0]).toMatch(ts);
    expect(gpu.slice(1, 5).map((l) => l.split(',')[1])).toEqual(['0', '1', '2', '3']);
    const cols: Record<string, number> = { cpu: 5, memory: 7, disk: 6, network: 7 };
    for (const [scope, count] of Object.entries(cols)) {
      const ls = lines(dir, scope);
      expect(ls.length, scope).toBeGreaterThanOrEqual(2);
      for (const l of ls) {
        const c = l.split(',');
        expect(c, `${scope}: ${l}`).toHaveLength(count);
        expect(c[0]).toMatch(ts);
      }
    }
    expect(lines(dir, 'disk')[0].split(',')[1]).toBe('/');
    const mem = lines(dir, 'memory')[0].split(',').map(Number);
    expect(mem[3]).toBe(mem[1] - mem[2]); // used = total − available
  });

  it('records an ERROR row when nvidia-smi is missing or fails, and keeps sampling', () => {
    const missing = fresh();
    spawnSync(
      shell,
      [
        SCRIPT,
        '--interval-ms',
        '100',
        '--scopes',
        'gpu',
        '--out-dir',
        missing,
        '--host',
        'testhost',
        '--max-ticks',
        '2',
      ],
      {
        env: { ...process.env, PATH: '/usr/bin:/bin' },
        timeout: 20_000,
      },
    );
    expect(lines(missing, 'gpu').slice(1)).toEqual([
      expect.stringMatching(/^\d+\.\d{3},ERROR,nvidia-smi not found$/),
      expect.stringMatching(/ERROR/),
    ]);
    const failing = fresh();
    const r = spawnSync(
      shell,
      [
        SCRIPT,
        '--interval-ms',
        '100',
        '--scopes',
        'gpu',
        '--out-dir',
        failing,
        '--host',
        'testhost',
        '--max-ticks',
        '2',
      ],
      {
        env: { ...process.env, PATH: `${FAKE_BIN}:/usr/bin:/bin`, FAKE_NVIDIA_SMI_FAIL: '9' },
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    expect(lines(failing, 'gpu')[1]).toMatch(
      /^\d+\.\d{3},ERROR,NVIDIA-SMI has failed because it couldn't communicate/,
    );
    expect(r.stderr).toMatch(/gpu sample failed/);
  });

  it('runs custom commands beside it and stops them with itself on TERM', async () => {
    const dir = fresh();
    const c = spawn(
      shell,
      [
        SCRIPT,
        '--interval-ms',
        '200',
        '--scopes',
        'cpu',
        '--out-dir',
        dir,
        '--host',
        'testhost',
        '--custom',
        'echo custom-one; exec sleep 300',
      ],
      { detached: true, stdio: 'ignore' },
    );
    started.push(c);
    const file = join(dir, 'custom_monitor_node_0_testhost.log');
    await until(
      'the custom line',
      () => existsSync(file) && readFileSync(file, 'utf8').includes('custom-one'),
    );
    expect(readFileSync(file, 'utf8')).toMatch(/^\d+\.\d{3},1,custom-one\n/);
    const sleeper = spawnSync(
      'sh',
      ['-c', `ps -eo pid,pgid,args | awk '$2 == ${c.pid} && $3 == "sleep" && $4 == "300" {print $1}'`],
      { encoding: 'utf8' },
    ).stdout.trim();
    expect(sleeper).toMatch(/^\d+$/);
    const exited = new Promise((r) => c.once('exit', r));
    process.kill(c.pid!, 'SIGTERM');
    await exited;
    await until('the custom command to stop', () => !alive(Number(sleeper)));
  });

  it('exits by itself when its parent (driver) pid is gone', async () => {
    const dir = fresh();
    const parent = spawn('sleep', ['300'], { stdio: 'ignore' });
    started.push(parent);
    const c = spawn(
      shell,
      [
        SCRIPT,
        '--interval-ms',
        '100',
        '--scopes',
        'memory',
        '--out-dir',
        dir,
        '--host',
        'testhost',
        '--parent-pid',
        String(parent.pid),
      ],
      {
        stdio: 'ignore',
      },
    );
    started.push(c);
    await until('a sample', () => existsSync(dir) && readdirSync(dir).length > 0);
    expect(c.exitCode).toBeNull();
    const exited = new Promise((r) => c.once('exit', r));
    parent.kill('SIGKILL');
    await exited;
    expect(c.exitCode).toBe(0);
  });

  it('rejects a bad interval or an unknown scope', () => {
    const a = spawnSync(shell, [SCRIPT, '--interval-ms', '99'], { encoding: 'utf8' });
    expect(a.status).toBe(2);
    expect(a.stderr).toMatch(/--interval-ms must be an integer >= 100/);
    const b = spawnSync(shell, [SCRIPT, '--scopes', 'cpu,gpus', '--out-dir', fresh()], { encoding: 'utf8' });
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/unknown scope 'gpus'/);
  });
});
