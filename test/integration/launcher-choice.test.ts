/**
 * Which launcher a driver gets (src/util/launcher/client.ts): SFLOW_LAUNCHER=perl|node|inline, the
 * default (Perl, then Node where Perl is missing), the reason given when none starts, and a fresh
 * launcher after the one in use died. Each test loads the module afresh (its launcher is per
 * driver) and stops the launchers it started.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';

type Client = typeof import('../../src/util/launcher/client.js');
const saved = { launcher: process.env.SFLOW_LAUNCHER, path: process.env.PATH };
const started: number[] = [];

async function fresh(env: { SFLOW_LAUNCHER?: string; PATH?: string }): Promise<Client> {
  vi.resetModules();
  if (env.SFLOW_LAUNCHER === undefined) delete process.env.SFLOW_LAUNCHER;
  else process.env.SFLOW_LAUNCHER = env.SFLOW_LAUNCHER;
  if (env.PATH !== undefined) process.env.PATH = env.PATH;
  return import('../../src/util/launcher/client.js');
}

/** the launcher the module hands out, its program read back from /proc */
async function launcherOf(c: Client): Promise<{ kind: string; pid: number; program: string } | null> {
  const lp = await c.getLauncher();
  if (!lp) return null;
  started.push(lp.pid);
  const program = process.platform === 'linux' ? readCmd(lp.pid) : '';
  return { kind: lp.kind, pid: lp.pid, program };
}

function readCmd(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
}

afterEach(() => {
  for (const pid of started.splice(0))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  if (saved.launcher === undefined) delete process.env.SFLOW_LAUNCHER;
  else process.env.SFLOW_LAUNCHER = saved.launcher;
  process.env.PATH = saved.path;
});

describe('the launcher a driver gets', () => {
  it('SFLOW_LAUNCHER=node: the Node launcher, whose pid launcherPid() gives', async () => {
    const c = await fresh({ SFLOW_LAUNCHER: 'node' });
    const l = await launcherOf(c);
    expect(l?.kind).toBe('node');
    expect(l?.program).toBe(process.execPath);
    expect(c.launcherPid()).toBe(l?.pid);
    expect(await c.getLauncher()).toBe(await c.getLauncher()); // one per driver
  });

  it('by default Perl; where no perl is on PATH, Node', async () => {
    const withPerl = await launcherOf(await fresh({}));
    expect(withPerl?.kind).toBe('perl');
    expect(withPerl?.program).toBe('perl');
    const noPerl = await launcherOf(await fresh({ PATH: '/nonexistent-sflow-path' }));
    expect(noPerl?.kind).toBe('node');
  });

  it('SFLOW_LAUNCHER=inline: none, and no launcher pid', async () => {
    const c = await fresh({ SFLOW_LAUNCHER: 'inline' });
    expect(await c.getLauncher()).toBeNull();
    expect(c.launcherPid()).toBeUndefined();
    expect(c.launcherError()).toBeUndefined();
  });

  it('none that starts: null, and the reason for a warning', async () => {
    const c = await fresh({ SFLOW_LAUNCHER: 'perl', PATH: '/nonexistent-sflow-path' });
    expect(await c.getLauncher()).toBeNull();
    expect(c.launcherError()).toMatch(/^perl launcher: .*ENOENT/);
    expect(c.launcherPid()).toBeUndefined();
  });

  it('after the launcher in use died, the next use starts a fresh one', async () => {
    const c = await fresh({ SFLOW_LAUNCHER: 'node' });
    const first = await c.getLauncher();
    expect(first).not.toBeNull();
    started.push(first!.pid);
    const gone = once(first!.process, 'exit'); // after the client's own exit listener
    first!.process.kill('SIGKILL');
    await gone;
    const second = await launcherOf(c);
    expect(second?.pid).not.toBe(first!.pid);
    expect(c.launcherPid()).toBe(second?.pid);
  });
});
