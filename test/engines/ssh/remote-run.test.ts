/**
 * `sflow run --ssh` against a real sshd, as the fixture account whose login shell has no Node.js
 * (so the single executable is what runs remotely): a 3-task recipe with an uploaded input, the
 * receipt, `watch --once`, `fetch --all`; a killed connection leaves the run going and `watch`
 * reattaches; Ctrl-C here leaves no remote process; `compose --ssh`; one test per connection
 * failure, each leaving no remote session behind.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sflow } from '../../helpers/cli.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import {
  EXE,
  childrenOf,
  ensureExecutable,
  processesWith,
  sflowAsync,
  until,
  VERSION,
} from './exe-helpers.js';

const ssh = engine('ssh');

describeWithEngines('sflow run --ssh (real sshd, remote account without Node.js)', [ssh], () => {
  const cfg = () => ssh.get('SFLOW_TEST_SSH_CONFIG');
  const dest = () => `${ssh.get('SFLOW_TEST_SSH_NONODE_USER')}@${ssh.get('SFLOW_TEST_SSH_ALIAS_A')}`;
  const sshText = () => `${dest()} -F ${cfg()}`;
  const remote = (cmd: string) =>
    spawnSync('ssh', ['-F', cfg(), dest(), cmd], { encoding: 'utf8', timeout: 60_000 });
  let local = ''; // made in beforeAll: the describe body runs even when the suite is skipped
  const tag = `${process.pid % 100000}`.padStart(5, '7');
  let root = '';
  let buildId = '';

  const recipe = (name: string, body: string) => {
    writeFileSync(
      join(local, `${name}.yaml`),
      `version: '0.1'\nworkflow:\n  name: ${name}\n  tasks:\n${body}`,
    );
    return join(local, `${name}.yaml`);
  };
  const runs = () =>
    existsSync(join(local, 'sflow_output'))
      ? readdirSync(join(local, 'sflow_output')).filter((d) => d.startsWith('ssh-'))
      : [];
  const remoteRuns = () => remote(`ls ${root}/runs`).stdout.split('\n').filter(Boolean);

  beforeAll(() => {
    local = mkdtempSync(join(tmpdir(), 'sflow-ssh-run-'));
    buildId = ensureExecutable();
    root = remote('mktemp -d').stdout.trim();
    expect(root).toMatch(/^\/tmp\//);
    mkdirSync(join(local, 'data'));
    writeFileSync(join(local, 'data', 'input.txt'), 'uploaded from here\n');
  }, 300_000);
  afterAll(() => {
    // a test that failed half-way may have left a run going: stop every session before removing them
    const exe = `${root}/bin/sflow-${buildId}-linux-${process.arch}`;
    const stopAll = `for s in ${root}/runs/*; do [ -x ${exe} ] && [ -d "$s" ] && ${exe} remote-agent stop "$s" >/dev/null 2>&1; done`;
    if (root) remote(`${stopAll}; rm -rf ${root} "$HOME/.cache/sflow/exe/${buildId}"`);
    if (local) rmSync(local, { recursive: true, force: true });
  });

  let receipt = '';
  it('runs a 3-task recipe remotely with the copied executable; receipt, watch --once, fetch --all', () => {
    expect(remote('command -v node || echo no-node').stdout.trim()).toBe('no-node');
    const f = recipe(
      'three',
      `    - name: one
      script: ["echo one as $(id -un)"]
    - name: two
      depends_on: [one]
      script: ["cat data/input.txt", "cp data/input.txt $SFLOW_WORKFLOW_OUTPUT_DIR/copy.txt"]
    - name: three
      depends_on: [one]
      script: ["echo three; sleep 1"]
artifacts:
  - name: input
    uri: fs://data
`,
    );
    const r = sflow(['run', '-f', f, '--ssh', sshText(), '--ssh-remote-root', root, '--ssh-follow', 'none'], {
      cwd: local,
      timeoutMs: 180_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /1\/4 connect[\s\S]*2\/4 sflow: .*\(copied\)[\s\S]*3\/4 inputs: recipe\.yaml \+ 1 file[\s\S]*4\/4 run/,
    );
    expect(r.stdout).toMatch(/\[one\] one as sflowremote/);
    expect(r.stdout).toMatch(/\[two\] uploaded from here/);
    expect(r.stdout).toMatch(/✓ Workflow completed/);
    const [session] = runs();
    receipt = join(local, 'sflow_output', session, 'receipt.json');
    expect(statSync(receipt).mode & 0o777).toBe(0o600);
    const rc = JSON.parse(readFileSync(receipt, 'utf8')) as Record<string, unknown>;
    expect(rc).toMatchObject({
      command: 'run',
      connection: sshText(),
      remote_session: `${root}/runs/${session}`,
      remote_sflow: `${root}/bin/sflow-${buildId}-linux-${process.arch}`,
      state: 'completed',
      exit_code: 0,
      sflow_version: VERSION,
    });
    // --ssh-fetch logs (default): the logs came back next to the receipt, the other outputs did not
    const runDir = readdirSync(join(local, 'sflow_output', session)).find((d) => d.startsWith('three-'))!;
    const localRun = join(local, 'sflow_output', session, runDir);
    expect(readFileSync(join(localRun, 'two', 'two.log'), 'utf8')).toBe('uploaded from here\n');
    expect(existsSync(join(localRun, 'sflow_summary.log'))).toBe(true);
    expect(existsSync(join(localRun, 'copy.txt'))).toBe(false);

    const w = sflow(['watch', receipt, '--once'], { cwd: local });
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toMatch(/^\[ssh \d\d:\d\d:\d\d\]\n==> three-[^/]+\/sflow_summary\.log <==/);
    expect(w.stdout).toMatch(/remote run completed \(exit 0\)\n$/);

    const all = join(local, 'fetched');
    const fe = sflow(['fetch', receipt, '--all', '-o', all], { cwd: local });
    expect([fe.code, fe.stdout.trim()]).toEqual([0, `Fetched remote output to ${all}`]);
    const remoteList = remote(`cd ${root}/runs/${session}/output && find . -type f | sort`)
      .stdout.trim()
      .split('\n');
    const localList = execFileSync('sh', ['-c', `cd ${all} && find . -type f | sort`], { encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(localList).toEqual(remoteList);
    expect(localList).toContain(`./${runDir}/copy.txt`);
  });

  it('the single executable as the local side finds its own copy in the remote cache', () => {
    const r = spawnSync(
      EXE,
      ['run', '-f', 'three.yaml', '--ssh', sshText(), '--ssh-remote-root', root, '--ssh-fetch', 'none'],
      {
        cwd: local,
        env: { ...process.env, SFLOW_CACHE_DIR: join(local, 'cache'), NO_COLOR: '1' },
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(
        `2/4 sflow: ${root}/bin/sflow-${buildId}-linux-${process.arch} \\(cached copy of this build\\)`,
      ),
    );
    expect(r.stdout).toMatch(/✓ Workflow completed/);
  });

  it('a killed connection leaves the run going; sflow watch reattaches and sees it end', async () => {
    const marker = `sleep 8.${tag}`;
    const f = recipe(
      'survive',
      `    - name: slow\n      script: ["echo slow-started", "${marker}", "echo slow-done"]\n`,
    );
    const before = new Set(runs());
    const run = sflowAsync(
      ['run', '-f', f, '--ssh', sshText(), '--ssh-remote-root', root, '--ssh-follow', 'status'],
      {
        cwd: local,
        env: { SFLOW_SSH_POLL_SECONDS: '1' },
      },
    );
    const follow = await until('the follow connection', () =>
      processesWith(marker).length
        ? childrenOf(run.child.pid!).find((c) => /remote-agent.*follow/.test(c.args))
        : undefined,
    );
    process.kill(-follow.pid, 'SIGKILL'); // ssh runs in its own process group
    const r = await run.done;
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/lost the connection to .*; the remote run goes on\n.*sflow watch /);
    expect(processesWith(marker).length).toBeGreaterThan(0); // still running remotely
    const session = runs().find((d) => !before.has(d))!;
    const rc = join(local, 'sflow_output', session, 'receipt.json');
    expect(JSON.parse(readFileSync(rc, 'utf8')).state).toBe('running');
    const w = sflowAsync(['watch', rc], { cwd: local, env: { SFLOW_SSH_POLL_SECONDS: '1' } });
    const wr = await w.done;
    expect(wr.code, wr.stderr).toBe(0);
    expect(wr.stdout).toMatch(/^\[ssh \d\d:\d\d:\d\d\]\n==> /); // snapshots of the live run's logs
    expect(wr.stdout).toMatch(/✓ Workflow completed/);
    expect(wr.stdout).toMatch(/remote run completed \(exit 0\)\n$/);
    expect(JSON.parse(readFileSync(rc, 'utf8'))).toMatchObject({ state: 'completed', exit_code: 0 });
  });

  it('Ctrl-C here stops the remote run: no remote process is left, the receipt says cancelled', async () => {
    const marker = `sleep 4${tag}`;
    const f = recipe(
      'cancel',
      `    - name: a\n      script: ["${marker}"]\n    - name: b\n      script: ["${marker}"]\n`,
    );
    const before = new Set(runs());
    const run = sflowAsync(['run', '-f', f, '--ssh', sshText(), '--ssh-remote-root', root], { cwd: local });
    await until('both remote tasks', () => processesWith(marker).length >= 2 || undefined);
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toMatch(/sent SIGINT to the remote controller[\s\S]*remote run cancelled \(exit 130\)/);
    await until('no remote task process', () => processesWith(marker).length === 0 || undefined, 20_000);
    const session = runs().find((d) => !before.has(d))!;
    expect(
      JSON.parse(readFileSync(join(local, 'sflow_output', session, 'receipt.json'), 'utf8')),
    ).toMatchObject({
      state: 'cancelled',
      exit_code: 130,
    });
    expect(remote(`ps -eo args | grep -c "[r]emote-agent .*${session}" || true`).stdout.trim()).toBe('0');
  });

  it('compose --ssh composes remotely and copies the result to -o', () => {
    const f = recipe('comp', '    - name: x\n      script: ["echo ${{ WHO }}"]\nvariables:\n  WHO: me\n');
    const out = join(local, 'composed.yaml');
    const r = sflow(
      [
        'compose',
        '-f',
        f,
        '-s',
        'WHO=you',
        '--resolve',
        '-o',
        out,
        '--ssh',
        sshText(),
        '--ssh-remote-root',
        root,
      ],
      {
        cwd: local,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toMatch(/echo you/);
  });

  describeWithEngines('connection failures: one clear message each, nothing left remotely', [ssh], () => {
    const fail = (sshArg: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) => {
      const before = runs().length;
      const r = sflow(
        ['run', '-f', join(local, 'three.yaml'), '--ssh', sshArg, '--ssh-remote-root', root, ...extra],
        {
          cwd: local,
          env,
        },
      );
      expect(r.code).toBe(1);
      expect(r.stderr.match(/✗/g)).toHaveLength(1);
      expect(runs().length).toBe(before); // no local session folder either
      return r.stderr;
    };
    let sessionsBefore: string[] = [];
    beforeAll(() => void (sessionsBefore = remoteRuns()));
    afterAll(() => expect(remoteRuns()).toEqual(sessionsBefore));

    it('host down', () => {
      expect(fail(`${dest()} -F ${cfg()} -p 1`)).toMatch(
        /✗ SSH error: cannot reach .*Connection refused\n {2}hint: check the host/,
      );
    });
    it('authentication refused', () => {
      expect(fail(`nobody@${ssh.get('SFLOW_TEST_SSH_ALIAS_A')} -F ${cfg()}`)).toMatch(
        /✗ SSH error: nobody@\S+ refused the login: .*Permission denied \(publickey\)[\s\S]*ControlMaster/,
      );
    });
    it('no sflow remotely and none here to copy', () => {
      const empty = join(local, 'no-exe');
      mkdirSync(empty, { recursive: true });
      const msg = fail(sshText(), ['--ssh-remote-root', `${root}/fresh`], { SFLOW_EXE_DIR: empty });
      expect(msg).toMatch(
        /has no sflow .*no single executable for linux-x64 here to copy\n {2}hint: download sflow-linux-x64 of release .* and set SFLOW_EXE_DIR/,
      );
    });
    it('remote root not writable', () => {
      expect(fail(sshText(), ['--ssh-remote-root', '/root/not-yours'])).toMatch(
        /cannot use the remote root \/root\/not-yours.*Permission denied/,
      );
    });
    it('remote disk full', (ctx) => {
      if (process.getuid?.() !== 0) ctx.skip(); // mounting a small tmpfs needs root
      const tiny = mkdtempSync(join(tmpdir(), 'sflow-tiny-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', tiny]);
      try {
        execFileSync('chown', [ssh.get('SFLOW_TEST_SSH_NONODE_USER'), tiny]);
        expect(fail(sshText(), ['--ssh-remote-root', `${tiny}/r`])).toMatch(
          /the remote disk is full: .* has \d+ MB free/,
        );
        expect(readdirSync(join(tiny, 'r', 'runs'))).toEqual([]);
        expect(readdirSync(join(tiny, 'r', 'bin'))).toEqual([]); // no half-copied executable
      } finally {
        execFileSync('umount', [tiny]);
        rmSync(tiny, { recursive: true, force: true });
      }
    });
    it('-t inside --ssh is a usage error', () => {
      const r = sflow(['run', '-f', join(local, 'three.yaml'), '--ssh', `${dest()} -t`], { cwd: local });
      expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(/`-t` inside --ssh is refused/)]);
    });
  });
});
