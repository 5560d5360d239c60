/**
 * The four attacks on the GPU reservation registry from issue 9, each carried out by a real second
 * unprivileged user (`sflow-attacker`, created by .ci/run) against a victim sflow process running as
 * another unprivileged user (`nobody`), in a scratch directory that stands in for /tmp (root-owned,
 * sticky, world-writable):
 *
 * 1. the registry path pre-created as a symbolic link → refused, the target is not chmod-ed;
 * 2. the registry path pre-created as a 0777 directory → refused (its owner could delete claims);
 * 3. a `.registry.lock` held forever in a shared registry → irrelevant (claims take no lock);
 * 4. records planted in a shared registry (dead pid, forged owner, borrowed pid) → none blocks a GPU.
 *
 * Needs root (to act as the two users); skips with the reason otherwise, unless
 * SFLOW_REQUIRE_SECOND_USER=1 (set by .ci/run), where it fails.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Claimer, ROOT, type Reply } from '../helpers/claimer.js';

const ATTACKER = 'sflow-attacker';
const VICTIM = 'nobody';

function ids(user: string): { uid: number; gid: number } | null {
  try {
    const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return null;
  }
}

const isRoot = process.getuid?.() === 0;
const attacker = isRoot ? ids(ATTACKER) : null;
const victim = isRoot ? ids(VICTIM) : null;
const skipReason = !isRoot
  ? 'GPU registry attack tests need root to act as two unprivileged users'
  : !attacker
    ? `GPU registry attack tests need the user '${ATTACKER}' (.ci/run creates it with useradd)`
    : !victim
      ? `GPU registry attack tests need the user '${VICTIM}'`
      : null;
if (skipReason && process.env.SFLOW_REQUIRE_SECOND_USER === '1') throw new Error(skipReason);
if (skipReason) console.warn(`skipped: ${skipReason}`);

let scratch: string;
let children: Claimer[] = [];

beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'sflow-gpu-attacks-'));
  chmodSync(scratch, 0o1777); // like /tmp: anyone may create entries, only owners may delete them
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
afterEach(async () => {
  for (const c of children) await c.stop();
  children = [];
});

/** run a shell snippet as the attacker; fails the test if it fails */
function asAttacker(script: string): void {
  const r = spawnSync('sh', ['-euc', script], { cwd: scratch, ...attacker, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`attacker step failed (${r.status}): ${r.stderr}`);
}

/** a victim sflow process (as `nobody`) claiming `count` GPUs with this environment */
async function victimClaims(count: number, env: Record<string, string>): Promise<Reply> {
  const c = new Claimer(
    'victim-run',
    {
      PATH: `${path.join(ROOT, 'assets/test-bin')}:${process.env.PATH ?? ''}`,
      FAKE_NVIDIA_SMI_GPUS: '4',
      HOME: scratch,
      TMPDIR: scratch,
      ...env,
    },
    victim ?? undefined,
  );
  children.push(c);
  const ready = await c.next(30_000);
  expect(ready.ready).toBe(true);
  c.send(`claim t ${count}`);
  return c.next(30_000);
}

/** the UUIDs the fake nvidia-smi reports, so planted records name the real (fake) cards */
function fakeUuids(): string[] {
  const out = execFileSync(
    path.join(ROOT, 'assets/test-bin/nvidia-smi'),
    ['--query-gpu=uuid', '--format=csv,noheader'],
    {
      encoding: 'utf8',
      env: { FAKE_NVIDIA_SMI_GPUS: '4' },
    },
  );
  return out
    .trim()
    .split('\n')
    .map((l) => l.trim());
}

/** a root-owned sticky directory, the documented shared set-up */
function sharedRegistry(name: string): string {
  const dir = path.join(scratch, name);
  mkdirSync(dir);
  chmodSync(dir, 0o1777);
  return dir;
}

describe.skipIf(skipReason !== null)('GPU registry attacked by another local user', () => {
  it('1: refuses a registry path planted as a symbolic link, and leaves the target alone', async () => {
    const root = mkdtempSync(path.join(scratch, 'a1-'));
    chmodSync(root, 0o1777);
    asAttacker(`mkdir -m 0755 ${root}/loot && ln -s ${root}/loot ${root}/sflow-gpu-reservations`);
    const r = await victimClaims(1, { TMPDIR: root });
    expect(r.ok).toBe(false);
    expect(r.code).toBe('GPU_REGISTRY_UNSAFE');
    expect(r.error).toContain(`${root}/sflow-gpu-reservations is not safe to use: it is a symbolic link`);
    expect(statSync(`${root}/loot`).mode & 0o7777).toBe(0o755);
    expect(readdirSync(`${root}/loot`)).toEqual([]);
  });

  it('2: refuses a registry directory pre-created (0777) by another user', async () => {
    const root = mkdtempSync(path.join(scratch, 'a2-'));
    chmodSync(root, 0o1777);
    asAttacker(`mkdir -m 0777 ${root}/sflow-gpu-reservations`);
    const r = await victimClaims(1, { TMPDIR: root });
    expect(r.ok).toBe(false);
    expect(r.code).toBe('GPU_REGISTRY_UNSAFE');
    expect(r.error).toContain(`is owned by another user (uid ${attacker?.uid})`);
    expect(readdirSync(`${root}/sflow-gpu-reservations`)).toEqual([]);
    expect(statSync(`${root}/sflow-gpu-reservations`).mode & 0o7777).toBe(0o777);
  });

  it('3: a lock held forever in a shared registry does not stop claims', async () => {
    const dir = sharedRegistry('a3');
    asAttacker(
      `mkdir ${dir}/.registry.lock && touch -d '+1 year' ${dir}/.registry.lock && ` +
        `echo hold > ${dir}/.registry.lock/held && : > ${dir}/registry.lock`,
    );
    const r = await victimClaims(2, { SFLOW_GPU_RESERVATION_DIR: dir });
    expect(r.ok, r.error).toBe(true);
    expect(r.indices).toEqual([0, 1]);
    expect(existsSync(`${dir}/.registry.lock/held`)).toBe(true);
  });

  it('4: planted records (dead pid, forged owner, borrowed pid) block no GPU', async () => {
    const dir = sharedRegistry('a4');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    const rec = (uid: number, pid: number) =>
      JSON.stringify({
        version: 1,
        runId: 'evil',
        task: 'hog',
        host: os.hostname(),
        pid,
        pidStartTime: null,
        uid,
        uuids: fakeUuids(),
        indices: [0, 1, 2, 3],
        state: 'held',
        createdAt: new Date().toISOString(),
      });
    const a = attacker as { uid: number };
    const v = victim as { uid: number };
    asAttacker(
      [
        `printf '%s' '${rec(a.uid, Number(dead))}' > ${dir}/dead-pid.json`,
        `printf '%s' '${rec(v.uid, process.pid)}' > ${dir}/forged-owner.json`,
        `printf '%s' '${rec(a.uid, 1)}' > ${dir}/borrowed-pid.json`,
      ].join(' && '),
    );
    const r = await victimClaims(4, { SFLOW_GPU_RESERVATION_DIR: dir });
    expect(r.ok, r.error).toBe(true);
    expect(r.indices).toEqual([0, 1, 2, 3]);
    const why = (r.ignored ?? []).join('\n');
    expect(why).toContain(`dead-pid.json: its process ${dead} is gone`);
    expect(why).toContain(`forged-owner.json: it names uid ${v.uid} but its file belongs to uid ${a.uid}`);
    expect(why).toContain(`borrowed-pid.json: its pid 1 belongs to uid 0, not to the record's uid ${a.uid}`);
  });
});
