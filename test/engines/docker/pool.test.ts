/**
 * A Docker pool over real SSH: hosts `a` and `b` of scripts/engines/ssh.sh, whose sessions reach
 * docker engines a and b. A two-host task runs one container per host (`docker -H ssh://<alias>`),
 * each with its node index and the leader's address; killing one member's container fails the
 * task and removes the other; Ctrl-C (130) and SIGTERM (143) of the driver leave no container of
 * the run on either host; a SIGKILLed driver's containers are removed by `sflow recover` or reaped
 * by the next run (by their `sflow.driver` label: a container of another machine's driver is left
 * alone); the pre-flight reports every broken host and missing mount at once.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN } from '../../helpers/cli.js';
import { sflowAsync } from '../../helpers/cli-async.js';
import { scratchDir } from '../../helpers/scratch.js';
import { processesWith, until } from '../../conformance/procs.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { buildHostbinImage, HOST_MOUNTS, HOSTBIN_IMAGE, removeHostbinImage } from './fixture.js';

const docker = engine('docker');
const ssh = engine('ssh');

describeWithEngines('Docker pool over SSH', [docker, ssh], () => {
  const engines = () => [docker.get('SFLOW_TEST_DOCKER_HOST_A'), docker.get('SFLOW_TEST_DOCKER_HOST_B')];
  let dir: string;
  let pool: string;
  let env: NodeJS.ProcessEnv;
  const names = async (engineHost: string, prefix = 'sflow-p', all = true) =>
    String(
      (
        await docker.exec('docker', [
          '-H',
          engineHost,
          'ps',
          ...(all ? ['-a'] : []),
          '--format',
          '{{.Names}}',
        ])
      ).stdout,
    )
      .split('\n')
      .filter((n) => n.startsWith(prefix));

  const poolYaml = (extraHost = '', mounts = HOST_MOUNTS) =>
    [
      'version: "0.1"',
      'backends:',
      '  - name: pool',
      '    type: docker',
      '    default: true',
      `    image: ${HOSTBIN_IMAGE}`,
      `    mounts: [${mounts.map((m) => `'${m}'`).join(', ')}]`,
      "    extra_args: ['--network=host']",
      '    hosts:',
      `      - {name: a, address: ${ssh.get('SFLOW_TEST_SSH_ALIAS_A')}, rendezvous_address: 127.0.0.1}`,
      `      - {name: b, address: ${ssh.get('SFLOW_TEST_SSH_ALIAS_B')}, rendezvous_address: 127.0.0.2}`,
      extraHost,
      '',
    ].join('\n');

  beforeAll(async () => {
    await buildHostbinImage(docker, engines());
    dir = scratchDir('sflow-docker-pool-');
    pool = join(dir, 'pool.yaml');
    writeFileSync(pool, poolYaml());
    env = {
      ...docker.childEnv(ssh.env),
      PATH: `${ssh.get('SFLOW_TEST_SSH_BIN')}:${process.env.PATH ?? ''}`,
      SFLOW_TASK_OUTPUT: 'never',
    };
    delete env.DOCKER_HOST; // every container goes to a pool host, never to the driver's engine
  });
  afterAll(() => removeHostbinImage(docker, engines()));

  const task = (name: string, script: string) => {
    const f = join(dir, `${name}.yaml`);
    writeFileSync(
      f,
      `version: "0.1"\nworkflow:\n  name: ${name}\n  tasks:\n    - name: ${name}\n      resources:\n        nodes:\n          count: 2\n      script:\n        - ${JSON.stringify(script)}\n`,
    );
    return f;
  };
  const runDir = (name: string) => {
    const d = readdirSync(join(dir, 'sflow_output')).find((x) => x.startsWith(`${name}-`))!;
    return join(dir, 'sflow_output', d);
  };

  /** collector processes or temporary folders left on the hosts, polled until none or the deadline */
  const collectorLeft = async (ms = 20_000) => {
    const end = Date.now() + ms;
    for (;;) {
      let left = '';
      for (const alias of [ssh.get('SFLOW_TEST_SSH_ALIAS_A'), ssh.get('SFLOW_TEST_SSH_ALIAS_B')]) {
        const r = await ssh.exec(join(ssh.get('SFLOW_TEST_SSH_BIN'), 'ssh'), [
          alias,
          'ps -eo args | grep "[s]flow-collector"; ls -d "${TMPDIR:-/tmp}"/sflow-monitor.* 2>/dev/null; true',
        ]);
        left += String(r.stdout).trim();
      }
      if (left === '' || Date.now() > end) return left;
      await sleep(500);
    }
  };

  it('a two-host task runs one container per host with its node index and the leader address, lines labelled', async () => {
    const f = task(
      'span',
      'echo "node=$SFLOW_TASK_NODE_INDEX of $SFLOW_TASK_NUM_NODES leader=$SFLOW_LEADER_ADDRESS on=$SFLOW_TASK_NODE_NAME job=$SFLOW_BACKEND_JOB_ID"',
    );
    const r = await sflowAsync(['run', '-f', f, '-f', pool, '--enable-workflow-monitor'], {
      cwd: dir,
      env,
      timeoutMs: 150_000,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // each pool host is sampled over ssh: its CSV rows land in the per-node raw files here
    expect(r.stdout + r.stderr).not.toMatch(/not sampled|did not start/);
    const raw = join(runDir('span'), 'sflow_monitor', 'raw');
    for (const [id, host] of [
      [0, 'a'],
      [1, 'b'],
    ] as const) {
      const files = readdirSync(raw).filter((n) =>
        new RegExp(`^[a-z]+_monitor_node_${id}_${host}\\.log$`).test(n),
      );
      const rows = files.flatMap((n) =>
        readFileSync(join(raw, n), 'utf8')
          .split('\n')
          .filter((l) => /^\d+\.\d{3},/.test(l)),
      );
      expect(rows.length, `${host}: ${files.join(' ')}`).toBeGreaterThan(0);
    }
    expect(await collectorLeft()).toBe(''); // nothing of the collectors is left on the hosts
    // one container per host: each saw its own node index, the node count and the leader (host a's
    // rendezvous address), and each line of the one task log carries its member's node and rank
    const log = readFileSync(join(runDir('span'), 'span', 'span.log'), 'utf8');
    // SFLOW_TASK_NODE_NAME is the pool host's name; SFLOW_BACKEND_JOB_ID the run id (no engine job)
    const job = basename(runDir('span'));
    expect(log.split('\n').filter(Boolean).sort()).toEqual([
      `[a #0] node=0 of 2 leader=127.0.0.1 on=a job=${job}`,
      `[b #1] node=1 of 2 leader=127.0.0.1 on=b job=${job}`, // the leader is host a, also for b
    ]);
    // the handle ledger names each member with its host's endpoint
    const ids = readFileSync(join(runDir('span'), 'handles.jsonl'), 'utf8');
    expect(ids).toMatch(new RegExp(`"sflow-p\\d+-span-a@ssh://${ssh.get('SFLOW_TEST_SSH_ALIAS_A')}"`));
    expect(ids).toMatch(new RegExp(`"sflow-p\\d+-span-b@ssh://${ssh.get('SFLOW_TEST_SSH_ALIAS_B')}"`));
    for (const e of engines()) expect(await names(e)).toEqual([]);
  });

  /** a monitored driver running a two-member task that sleeps, once both containers are running */
  const startLong = async (name: string, extraEnv: NodeJS.ProcessEnv = {}) => {
    const f = task(name, 'echo up-$SFLOW_TASK_NODE_INDEX; exec sleep 300');
    const child = spawn(process.execPath, [BIN, 'run', '-f', f, '-f', pool, '--enable-workflow-monitor'], {
      cwd: dir,
      env: { ...env, ...extraEnv },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    const mine = `sflow-p${child.pid}-`;
    const [a, b] = engines();
    const end = Date.now() + 90_000;
    // both containers running (not merely created)
    while ((await names(a, mine, false)).length === 0 || (await names(b, mine, false)).length === 0) {
      if (Date.now() > end) {
        child.kill('SIGKILL');
        throw new Error(`${name}: the two members did not start`);
      }
      await sleep(500);
    }
    return { child, exited, mine };
  };
  /** the run's containers left on either host, polled until none or the deadline */
  const leftAfter = async (mine: string, ms = 30_000) => {
    const end = Date.now() + ms;
    for (;;) {
      const left = (await Promise.all(engines().map((e) => names(e, mine)))).flat();
      if (left.length === 0 || Date.now() > end) return left;
      await sleep(500);
    }
  };

  it('killing one member fails the task with its code and removes the other', async () => {
    const { child, exited, mine } = await startLong('victim');
    try {
      const [a, b] = engines();
      expect(await names(b, mine)).toEqual([`${mine}victim-b`]);
      expect(await names(a, mine)).toEqual([`${mine}victim-a`]);
      const k = await docker.exec('docker', ['-H', b, 'kill', `${mine}victim-b`]);
      expect(k.exitCode, String(k.stderr)).toBe(0);
      expect(await exited).toBe(1);
      const events = readFileSync(join(runDir('victim'), 'events.jsonl'), 'utf8');
      expect(events).toMatch(/"exitCode":137/);
      for (const e of engines()) expect(await names(e, mine)).toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('a member that fails by itself fails the task with its code; no container is left on either host', async () => {
    const f = task(
      'selffail',
      'if [ "$SFLOW_TASK_NODE_INDEX" = 1 ]; then sleep 1; exit 3; fi; exec sleep 300',
    );
    const r = await sflowAsync(['run', '-f', f, '-f', pool], { cwd: dir, env, timeoutMs: 150_000 });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(readFileSync(join(runDir('selffail'), 'events.jsonl'), 'utf8')).toMatch(/"exitCode":3/);
    const ids = readFileSync(join(runDir('selffail'), 'handles.jsonl'), 'utf8');
    const mine = /"(sflow-p\d+-)selffail-a@/.exec(ids)?.[1];
    expect(mine, ids).toBeDefined();
    for (const e of engines()) expect(await names(e, mine)).toEqual([]);
  });

  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)
    it(`${sig} of the driver during a pool run exits ${code} and leaves no container on either host`, async () => {
      const { child, exited, mine } = await startLong(`sig${code}`);
      try {
        child.kill(sig);
        expect(await exited).toBe(code);
        expect(await leftAfter(mine)).toEqual([]);
        expect(await collectorLeft()).toBe(''); // the monitor's ssh sessions ended their collectors
      } finally {
        child.kill('SIGKILL');
      }
    });

  it('SIGKILL of a monitored pool driver: nothing of the run is left on either host (containers, ssh collectors, sessions)', async () => {
    const { child, exited, mine } = await startLong('poolkill');
    try {
      const d = runDir('poolkill');
      // this fixture's ssh clients of the monitor (their command lines name the fixture's config)
      const sshCollectors = () =>
        processesWith('sflow-monitor').filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(ssh.get('SFLOW_TEST_SSH_DIR'));
          } catch {
            return false;
          }
        });
      await until(() => sshCollectors().length === 2, 30_000, 'one ssh collector per host');
      expect(processesWith(d).length).toBeGreaterThan(0); // the idle reaper
      child.kill('SIGKILL');
      await exited;
      // the lifeline wakes the reaper (`sflow recover`: both members stopped and removed); the
      // ssh collectors see end of file on stdin and end their remote wrappers
      expect(await leftAfter(mine, 60_000)).toEqual([]);
      expect(await collectorLeft(60_000)).toBe('');
      await until(() => processesWith(d).length === 0, 60_000, 'no local process of the run');
      await until(() => sshCollectors().length === 0, 60_000, 'no ssh session of the monitor');
      expect(readFileSync(join(d, 'sflow_summary.log'), 'utf8')).toContain(
        `ended by a lost driver (pid ${child.pid}`,
      );
    } finally {
      child.kill('SIGKILL');
    }
  });

  it("SIGKILLed drivers: `sflow recover` removes one run's containers on both hosts, the next run reaps the other's, not another machine's", async () => {
    // a container of a driver on another machine sharing host a: its pid is dead HERE, which says
    // nothing about that machine, so the next run must leave it alone
    const foreignPid = spawnSync('true').pid;
    const foreign = `sflow-p${foreignPid}-foreign-a`;
    const [ea] = engines();
    const made = await docker.exec('docker', [
      '-H',
      ea,
      'run',
      '-d',
      '--name',
      foreign,
      '--label',
      `sflow.driver=sflow-elsewhere.invalid:${foreignPid}:1`,
      docker.get('SFLOW_TEST_DOCKER_IMAGE'),
      'sleep',
      '300',
    ]);
    expect(made.exitCode, String(made.stderr)).toBe(0);
    // drivers without a lifeline (SFLOW_LAUNCHER=inline: as if the launcher died with them), the
    // worst case recover and reaping exist for
    const inline = { SFLOW_LAUNCHER: 'inline' };
    const [x, y] = await Promise.all([startLong('killx', inline), startLong('killy', inline)]);
    try {
      // every member names its driver: this host, the driver's pid, its start time
      for (const e of engines()) {
        const [n] = await names(e, x.mine);
        const l = await docker.exec('docker', [
          '-H',
          e,
          'inspect',
          '--format',
          '{{index .Config.Labels "sflow.driver"}}',
          n,
        ]);
        expect(String(l.stdout).trim()).toMatch(new RegExp(`^${hostname()}:${x.child.pid}:[1-9]\\d*$`));
      }
      for (const r of [x, y]) r.child.kill('SIGKILL');
      await Promise.all([x.exited, y.exited]);
      // nobody stopped them: both members of both runs are still there
      for (const e of engines()) {
        expect(await names(e, x.mine)).toHaveLength(1);
        expect(await names(e, y.mine)).toHaveLength(1);
      }
      const rec = await sflowAsync(['recover', runDir('killx')], { cwd: dir, env, timeoutMs: 150_000 });
      expect(rec.code, rec.stdout + rec.stderr).toBe(0);
      for (const e of engines()) expect(await names(e, x.mine)).toEqual([]);
      for (const e of engines()) expect(await names(e, y.mine)).toHaveLength(1); // not this run's
      const next = await sflowAsync(['run', '-f', task('after', 'echo ok'), '-f', pool], {
        cwd: dir,
        env,
        timeoutMs: 150_000,
      });
      expect(next.code, next.stdout + next.stderr).toBe(0);
      expect(await leftAfter(y.mine)).toEqual([]);
      expect(await collectorLeft()).toBe(''); // the dead drivers' ssh collectors saw EOF and ended
      // the other machine's container is still there, and the run said why it left it
      expect(await names(ea, foreign, false)).toEqual([foreign]);
      expect(next.stdout + next.stderr + readFileSync(join(runDir('after'), 'sflow.log'), 'utf8')).toContain(
        `container(s) of sflow drivers on other hosts (sflow-elsewhere.invalid) on ssh://${ssh.get('SFLOW_TEST_SSH_ALIAS_A')} alone: ${foreign}`,
      );
    } finally {
      for (const r of [x, y]) r.child.kill('SIGKILL');
      await docker.exec('docker', ['-H', ea, 'rm', '-f', foreign]);
    }
  });

  it('the pre-flight names every broken host and missing mount source together', async () => {
    const broken = join(dir, 'broken.yaml');
    writeFileSync(
      broken,
      poolYaml('      - {name: ghost, address: sflow-no-such-host.invalid}', [
        ...HOST_MOUNTS,
        '/nonexistent/sflow-src:/data',
      ]),
    );
    const f = task('pre', 'echo never');
    const r = await sflowAsync(['run', '-f', f, '-f', broken], { cwd: dir, env, timeoutMs: 150_000 });
    expect(r.code).toBe(1);
    const out = r.stdout + r.stderr;
    expect(out).toMatch(/host 'ghost' \(ssh:\/\/sflow-no-such-host\.invalid\): docker version/);
    expect(out).toMatch(/host 'a' .*bind-mount source \/nonexistent\/sflow-src does not exist there/);
    expect(out).toMatch(/host 'b' .*bind-mount source \/nonexistent\/sflow-src does not exist there/);
    expect(out).not.toMatch(/echo never|never\n/);
  });
});
