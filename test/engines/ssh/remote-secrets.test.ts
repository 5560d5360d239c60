/**
 * `SFLOW_SECRET_HF_TOKEN=<value> sflow run --ssh …` keeps the secret where it must be and nowhere
 * else: it reaches the remote task (its environment), crosses the connection on ssh's stdin (the
 * uploaded recipe, 0600 remotely), and is in no command line on the host while the run goes on —
 * not even the local sflow's (issue 24 item 7) — not in the receipt, not in the local recipe copy
 * (0600, the value replaced), not in the fetched output.
 */
import { createHash, randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { ensureExecutable, processesWith, sflowAsync, until } from './exe-helpers.js';

const ssh = engine('ssh');

/** every regular file under `dir`, recursively */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describeWithEngines('run --ssh with a secret variable (real sshd)', [ssh], () => {
  const cfg = () => ssh.get('SFLOW_TEST_SSH_CONFIG');
  const dest = () => `${ssh.get('SFLOW_TEST_SSH_NONODE_USER')}@${ssh.get('SFLOW_TEST_SSH_ALIAS_A')}`;
  const remote = (cmd: string) =>
    spawnSync('ssh', ['-F', cfg(), dest(), cmd], { encoding: 'utf8', timeout: 60_000 });
  const token = `hf_${randomBytes(16).toString('hex')}`;
  const marker = `sleep 3.${process.pid % 100000}`;
  let local = '';
  let root = '';
  let buildId = '';

  beforeAll(() => {
    local = mkdtempSync(join(tmpdir(), 'sflow-ssh-secret-'));
    buildId = ensureExecutable();
    root = remote('mktemp -d').stdout.trim();
    expect(root).toMatch(/^\/tmp\//);
  }, 300_000);
  afterAll(() => {
    const exe = `${root}/bin/sflow-${buildId}-linux-${process.arch}`;
    const stopAll = `for s in ${root}/runs/*; do [ -x ${exe} ] && [ -d "$s" ] && ${exe} remote-agent stop "$s" >/dev/null 2>&1; done`;
    if (root) remote(`${stopAll}; rm -rf ${root} "$HOME/.cache/sflow/exe/${buildId}"`);
    if (local) rmSync(local, { recursive: true, force: true });
  });

  it('the value reaches the task and no command line, receipt or local file outside 0600 ones', async () => {
    const f = join(local, 'secret.yaml');
    writeFileSync(
      f,
      `version: '0.1'
variables:
  HF_TOKEN: not-given
workflow:
  name: secret
  tasks:
    - name: use
      script:
        - 'printf %s "$HF_TOKEN" | sha256sum | cut -c1-64 > "$SFLOW_WORKFLOW_OUTPUT_DIR/token.sha"'
        - '${marker}'
`,
    );
    const run = sflowAsync(
      ['run', '-f', f, '--ssh', `${dest()} -F ${cfg()}`, '--ssh-remote-root', root, '--ssh-fetch', 'all'],
      { cwd: local, env: { SFLOW_SECRET_HF_TOKEN: token }, timeoutMs: 180_000 },
    );
    // while the task runs: no command line on this machine (= the test host) holds the value —
    // not the local sflow's, ssh's, the remote agent's, the controller's or the task's. ps as the
    // remote account sees every process.
    await until('the remote task', () => processesWith(marker).length > 0 || undefined, 120_000);
    const ps = remote('ps -eww -o pid=,user=,args=');
    expect(ps.status, ps.stderr).toBe(0);
    expect(ps.stdout).toMatch(new RegExp(marker.replace('.', '\\.')));
    const holding = ps.stdout
      .split('\n')
      .filter((l) => l.includes(token))
      .map((l) => Number(/^\s*(\d+)/.exec(l)?.[1]));
    expect(holding).toEqual([]);
    expect(processesWith(token).map(Number)).toEqual([]);

    const r = await run.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(token);
    const [session] = readdirSync(join(local, 'sflow_output')).filter((d) => d.startsWith('ssh-'));
    const localDir = join(local, 'sflow_output', session);

    // the task got the value (its hash, written by the task, came back with --ssh-fetch all)
    const [runDir] = readdirSync(localDir).filter((d) => d.startsWith('secret-'));
    expect(readFileSync(join(localDir, runDir, 'token.sha'), 'utf8').trim()).toBe(
      createHash('sha256').update(token).digest('hex'),
    );

    // locally: nowhere, and the two files sflow writes itself are 0600
    const localFiles = filesUnder(local).filter((p) => p !== f);
    expect(localFiles.length).toBeGreaterThan(3);
    expect(localFiles.filter((p) => readFileSync(p).includes(token))).toEqual([]);
    for (const own of ['receipt.json', 'recipe.yaml'])
      expect(statSync(join(localDir, own)).mode & 0o777, own).toBe(0o600);
    expect(readFileSync(join(localDir, 'recipe.yaml'), 'utf8')).toMatch(
      /HF_TOKEN[\s\S]*<secret: not recorded>/,
    );

    // remotely: only in the uploaded recipe, which only the account can read
    const remoteSession = `${root}/runs/${session}`;
    const holders = remote(`grep -rlF -- '${token}' ${remoteSession} || true`);
    expect(holders.stdout.trim().split('\n')).toEqual([`${remoteSession}/inputs/recipe.yaml`]);
    expect(remote(`stat -c %a ${remoteSession}/inputs/recipe.yaml`).stdout.trim()).toBe('600');
  });
});
