/**
 * Fault injection on the real engines (issue 24): each fault hits a run in the middle — a killed
 * and restarted dockerd, slurmctld down for 30 s, a slurmd killed under a running step, the
 * Kubernetes API answering 500s, hanging and dropping its watches, a pool host whose sshd freezes,
 * the run folder's disk filling. For each: the run survives a transient fault or ends with a clear
 * verdict naming it; nothing of the run is left; events.jsonl is valid JSON lines, one record each,
 * from run_started to run_finished. Every fault adds a row to the table of docs/reliability.md:
 * the last test checks the doc against this run (times excepted: they are this machine's), or
 * rewrites it with SFLOW_UPDATE_RELIABILITY=1. The faults touch only the daemons of this
 * $SFLOW_ENGINES_DIR (the engine scripts' `fault` verbs) and start again whatever they stopped,
 * also when a test fails, so later suites find whole engines.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { readHandleLedger } from '../../../src/events/handle-ledger.js';
import { required, sandboxMissing, startK8s, type K8s } from '../k8s/harness.js';
import { leftovers } from '../k8s/backend-helpers.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { buildHostbinImage, HOST_MOUNTS, HOSTBIN_IMAGE, removeHostbinImage } from '../docker/fixture.js';
import {
  checkLedger,
  docRows,
  fault,
  logHas,
  processesNaming,
  RELIABILITY_DOC,
  startDriver,
  taskReason,
  until,
  writeTable,
  type FaultRow,
} from './fault-kit.js';
import { membersOf } from '../../../src/backends/docker/members.js';

const docker = engine('docker');
const slurm = engine('slurm');
const ssh = engine('ssh');
const rows: FaultRow[] = [];
/** a fault test: a run, the fault, the verdict and the leftovers check, on a loaded machine */
const FAULT_MS = 420_000;
vi.setConfig({ testTimeout: FAULT_MS, hookTimeout: FAULT_MS });
const dirs: string[] = [];
const scratch = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const dockerBackend = (name: string, extra: string[] = []) =>
  [
    'version: "0.1"',
    'backends:',
    `  - name: ${name}`,
    '    type: docker',
    '    default: true',
    `    image: ${HOSTBIN_IMAGE}`,
    `    mounts: [${HOST_MOUNTS.map((m) => `'${m}'`).join(', ')}]`,
    "    extra_args: ['--network=host']",
    ...extra.map((l) => `    ${l}`),
    '',
  ].join('\n');

/** a workflow: `svc` prints `up`, works `secs`, prints `done`; `after` runs once it completed */
const twoTasks = (name: string, secs: number, svcExtra: string[] = [], afterExtra: string[] = []) =>
  [
    'workflow:',
    `  name: ${name}`,
    '  tasks:',
    '    - name: svc',
    ...svcExtra.map((l) => `      ${l}`),
    `      script: ["echo up; sleep ${secs}; echo done"]`,
    '    - name: after',
    '      depends_on: [svc]',
    ...afterExtra.map((l) => `      ${l}`),
    '      script: ["echo after"]',
    '',
  ].join('\n');

/** containers named in a run's handle ledger still on `hosts` */
async function containersLeft(runDir: string, hosts: string[]): Promise<string[]> {
  const names = readHandleLedger(join(runDir, 'handles.jsonl')).all.flatMap((h) =>
    membersOf(h).map((m) => m.name),
  );
  const all: string[] = [];
  for (const h of hosts) {
    const r = await docker.exec('docker', ['-H', h, 'ps', '-a', '--format', '{{.Names}}']);
    all.push(...String(r.stdout).split('\n'));
  }
  return names.filter((n) => all.includes(n));
}

describeWithEngines('fault: dockerd killed and restarted mid-run', [docker], () => {
  const host = () => docker.get('SFLOW_TEST_DOCKER_HOST_A');
  afterAll(async () => {
    fault('docker', 'start', 'dockerd-a');
    await removeHostbinImage(docker, [host()]);
  });

  it('the task ends FAILED naming the engine outage; no container is left', async () => {
    await buildHostbinImage(docker, [host()]);
    const cwd = scratch('sflow-fault-dockerd-');
    writeFileSync(join(cwd, 'wf.yaml'), dockerBackend('box') + twoTasks('dkfault', 30));
    const d = startDriver(['-f', 'wf.yaml'], cwd, docker.childEnv({ DOCKER_HOST: host() }));
    await until('the task up', () => logHas(d.runDir(), 'svc', 'up'));
    const t0 = Date.now();
    fault('docker', 'kill', 'dockerd-a');
    await sleep(3_000);
    fault('docker', 'start', 'dockerd-a');
    const end = await d.done;
    const runDir = d.runDir()!;
    const c = checkLedger(runDir);
    expect(c.torn).toEqual([]);
    expect(c.opened && c.closed).toBe(true);
    expect(end.code, d.out()).toBe(1);
    const reason = taskReason(c, 'svc');
    expect(reason).toMatch(/FAILED: the Docker engine stopped answering while container \S+ ran/);
    await until('no container of the run', async () => (await containersLeft(runDir, [host()])).length === 0);
    await until('no process of the run', () => processesNaming(runDir).length === 0);
    rows.push({
      fault: 'dockerd killed and restarted mid-run',
      injected:
        '`docker.sh fault kill dockerd-a` (SIGKILL) under a running container, started again 3 s later',
      outcome:
        'the task FAILED: "the Docker engine stopped answering while container … ran (no answer for N s …); the container ended with 143" (a restart without live-restore stops its containers); dependents cancelled; exit 1',
      verdictS: (end.at - t0) / 1000,
      left: (await containersLeft(runDir, [host()])).length + processesNaming(runDir).length,
    });
  });
});

describeWithEngines('fault: slurmctld stopped for 30 s, a slurmd killed under a step', [slurm], () => {
  afterAll(() => {
    fault('slurm', 'start', 'slurmctld');
    fault('slurm', 'start', 'slurmd-n2');
  });
  const frag = (cwd: string, job: string) =>
    [
      "version: '0.1'",
      'backends:',
      '  - name: cluster',
      '    type: slurm',
      '    default: true',
      '    account: sflowtest',
      `    partition: ${slurm.get('SFLOW_TEST_SLURM_PARTITION')}`,
      "    time: '00:10:00'",
      '    nodes: 2',
      `    job_name: ${job}`,
      '',
    ].join('\n');
  const jobLeft = async (job: string) => {
    const r = await slurm.exec('squeue', ['-h', '-n', job, '-o', '%i']);
    return String(r.stdout).trim().split('\n').filter(Boolean).length;
  };

  it('slurmctld down for 30 s: the run goes on and completes; nothing is left', async () => {
    const cwd = scratch('sflow-fault-ctld-');
    const job = `sflowfault${process.pid}ctld`;
    writeFileSync(join(cwd, 'wf.yaml'), frag(cwd, job) + twoTasks('ctldfault', 40));
    const d = startDriver(['-f', 'wf.yaml'], cwd, slurm.childEnv());
    await until('the step up', () => logHas(d.runDir(), 'svc', 'up'), 90_000);
    const t0 = Date.now();
    fault('slurm', 'kill', 'slurmctld');
    await sleep(30_000);
    fault('slurm', 'start', 'slurmctld');
    const end = await d.done;
    const runDir = d.runDir()!;
    const c = checkLedger(runDir);
    expect(c.torn).toEqual([]);
    expect(c.opened && c.closed).toBe(true);
    expect(end.code, d.out()).toBe(0);
    expect(logHas(runDir, 'after', 'after')).toBe(true);
    await until('no job of the run', async () => (await jobLeft(job)) === 0, 60_000);
    await until('no process of the run', () => processesNaming(runDir).length === 0);
    rows.push({
      fault: 'slurmctld stopped for 30 s mid-run',
      injected: '`slurm.sh fault kill slurmctld` while a step runs, started again 30 s later (state kept)',
      outcome: 'survives: the step runs on, status calls are retried, the run COMPLETED (exit 0)',
      verdictS: (end.at - t0) / 1000,
      left: (await jobLeft(job)) + processesNaming(runDir).length,
    });
  });

  it('a slurmd killed under a running step: the run ends with a verdict naming it; nothing is left', async () => {
    const cwd = scratch('sflow-fault-slurmd-');
    const job = `sflowfault${process.pid}slurmd`;
    // both steps on node n2 (index 1), whose slurmd is killed while the first runs
    const onN2 = ['resources: {nodes: {indices: [1]}}'];
    writeFileSync(join(cwd, 'wf.yaml'), frag(cwd, job) + twoTasks('slurmdfault', 20, onN2, onN2));
    const d = startDriver(['-f', 'wf.yaml'], cwd, slurm.childEnv());
    await until('the step up', () => logHas(d.runDir(), 'svc', 'up'), 90_000);
    const t0 = Date.now();
    fault('slurm', 'kill', 'slurmd-n2');
    let end: { code: number | null; at: number };
    try {
      end = await d.done;
    } finally {
      fault('slurm', 'start', 'slurmd-n2');
    }
    const runDir = d.runDir()!;
    const c = checkLedger(runDir);
    expect(c.torn).toEqual([]);
    expect(c.opened && c.closed).toBe(true);
    // the running step outlives its slurmd (its slurmstepd runs on); the next one cannot start there
    expect(end.code, d.out()).toBe(1);
    expect(taskReason(c, 'svc')).toBe('COMPLETED');
    expect(taskReason(c, 'after')).toMatch(
      /^FAILED: the Slurm step did not start: Task launch for StepId=\S+ failed on node n2/,
    );
    await until('no job of the run', async () => (await jobLeft(job)) === 0, 90_000);
    await until('no process of the run', () => processesNaming(runDir).length === 0);
    rows.push({
      fault: 'a slurmd killed under a running step',
      injected:
        '`slurm.sh fault kill slurmd-n2` (SIGKILL) while a step runs on n2, the next step due there; started again after the verdict',
      outcome:
        'the running step outlives its slurmd and COMPLETED; the next step on n2 FAILED: "the Slurm step did not start: Task launch … failed on node n2 … — slurmd on n2 did not take the step: check `scontrol show node n2` …"; exit 1',
      verdictS: (end.at - t0) / 1000,
      left: (await jobLeft(job)) + processesNaming(runDir).length,
    });
  });
});

const missing = sandboxMissing();
describe.skipIf(missing !== undefined && !required)(
  `fault: the Kubernetes API answers 500s, hangs and drops its watches${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let k: K8s | undefined;
    afterAll(async () => {
      await k?.emu.stop();
    });

    it('the run survives: every task COMPLETED, nothing is left in the namespace', async () => {
      if (missing) throw new Error(missing);
      k = await startK8s({ nodes: 1, gpus: 4 });
      const cwd = scratch('sflow-fault-k8s-');
      writeFileSync(
        join(cwd, 'wf.yaml'),
        [
          "version: '0.1'",
          'backends:',
          '  - name: cluster',
          '    type: kubernetes',
          '    default: true',
          '    namespace: default',
          '    nodes: 1',
          '    gpus_per_node: 4',
          '    reservation:',
          '      timeout: 60',
          'operators:',
          '  - name: pod',
          '    type: k8s',
          '    image: bash:5',
          twoTasks('k8sfault', 12).replace(
            / {4}- name: (svc|after)\n/g,
            '    - name: $1\n      operator: pod\n',
          ),
        ].join('\n'),
      );
      const d = startDriver(['-f', 'wf.yaml', '--kubeconfig', k.emu.kubeconfigPath], cwd, {
        ...process.env,
        SFLOW_K8S_WAIT_HEARTBEAT_SECS: '1',
      });
      await until('the pod up', () => logHas(d.runDir(), 'svc', 'up'), 120_000);
      const t0 = Date.now();
      const dropped = k.emu.faults.dropWatches();
      k.emu.faults.errors = 6;
      k.emu.faults.hangs = 2;
      const end = await d.done;
      const injected = k.emu.requests().filter((r) => r.fault);
      const runDir = d.runDir()!;
      const c = checkLedger(runDir);
      expect(c.torn).toEqual([]);
      expect(c.opened && c.closed).toBe(true);
      expect(end.code, d.out()).toBe(0);
      expect(dropped).toBeGreaterThan(0);
      expect(injected.length).toBeGreaterThan(0);
      const emu = k.emu;
      await until('the namespace empty of the run', () => leftovers(emu).length === 0, 60_000);
      await until('no process of the run', () => processesNaming(runDir).length === 0);
      rows.push({
        fault: 'the Kubernetes API answers 500s, hangs and drops its watches',
        injected:
          'k8s emulator `faults`: every open watch dropped, the next 6 requests answered 500, the next 2 reads never answered',
        outcome:
          'survives: reads retried, watches re-established, hung calls ended by their timeout; the run COMPLETED (exit 0)',
        verdictS: (end.at - t0) / 1000,
        left: leftovers(emu).length + processesNaming(runDir).length,
      });
    });
  },
);

describeWithEngines('fault: an SSH pool host stops answering', [docker, ssh], () => {
  const engines = () => [docker.get('SFLOW_TEST_DOCKER_HOST_A'), docker.get('SFLOW_TEST_DOCKER_HOST_B')];
  afterAll(async () => {
    fault('ssh', 'cont', 'sshd-b');
    await removeHostbinImage(docker, engines());
  });

  it('sshd of host b frozen for 20 s: the run survives or names the host; nothing is left', async () => {
    await buildHostbinImage(docker, engines());
    const cwd = scratch('sflow-fault-ssh-');
    writeFileSync(
      join(cwd, 'wf.yaml'),
      dockerBackend('pool', [
        'hosts:',
        `  - {name: a, address: ${ssh.get('SFLOW_TEST_SSH_ALIAS_A')}, rendezvous_address: 127.0.0.1}`,
        `  - {name: b, address: ${ssh.get('SFLOW_TEST_SSH_ALIAS_B')}, rendezvous_address: 127.0.0.2}`,
      ]) + twoTasks('sshfault', 45, ['resources: {nodes: {count: 2}}']),
    );
    const env: NodeJS.ProcessEnv = {
      ...docker.childEnv(ssh.env),
      PATH: `${ssh.get('SFLOW_TEST_SSH_BIN')}:${process.env.PATH ?? ''}`,
    };
    delete env.DOCKER_HOST;
    const d = startDriver(['-f', 'wf.yaml'], cwd, env);
    const bothUp = () => {
      try {
        return /up[\s\S]*up/.test(readFileSync(join(d.runDir() ?? '', 'svc', 'svc.log'), 'utf8'));
      } catch {
        return false;
      }
    };
    await until('both members up', bothUp, 120_000);
    const t0 = Date.now();
    fault('ssh', 'stop', 'sshd-b');
    try {
      await sleep(20_000);
    } finally {
      fault('ssh', 'cont', 'sshd-b');
    }
    const end = await d.done;
    const runDir = d.runDir()!;
    const c = checkLedger(runDir);
    expect(c.torn).toEqual([]);
    expect(c.opened && c.closed).toBe(true);
    expect([0, 1], d.out()).toContain(end.code);
    if (end.code === 1)
      expect(taskReason(c, 'svc')).toMatch(/ssh:\/\/|sflow-b|host b|stopped answering|lost/);
    await until(
      'no container of the run',
      async () => (await containersLeft(runDir, engines())).length === 0,
      90_000,
    );
    await until('no process of the run', () => processesNaming(runDir).length === 0);
    rows.push({
      fault: 'an SSH pool host stops answering',
      injected:
        "`ssh.sh fault stop sshd-b` (SIGSTOP of host b's sshd and its sessions) for 20 s under a two-host task",
      outcome:
        end.code === 0
          ? 'survives: status calls to host b time out and are retried; once it answers again the task completes (exit 0)'
          : 'ends FAILED naming host b (its status calls went unanswered); its container is removed once it answers again',
      verdictS: (end.at - t0) / 1000,
      left: (await containersLeft(runDir, engines())).length + processesNaming(runDir).length,
    });
  });
});

const root = process.getuid?.() === 0;
describe.skipIf(!root && !required)('fault: the run folder’s disk fills mid-run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sflow-fault-disk-'));
  const mnt = join(dir, 'mnt');
  mkdirSync(mnt);
  afterAll(() => {
    spawnSync('umount', [mnt], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  });

  it('a task fills the disk, then frees it: a clear verdict names the records that failed; the ledger stays whole lines', async () => {
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt], { encoding: 'utf8' });
    expect(m.status, m.stderr).toBe(0);
    writeFileSync(
      join(mnt, 'wf.yaml'),
      [
        'version: "0.1"',
        'workflow:',
        '  name: diskfault',
        '  tasks:',
        // svc fills the disk at once and frees it 4 s later; `during` ends meanwhile, so its
        // records are due while nothing can be written
        '    - name: svc',
        '      script: ["echo up; head -c 4000000 /dev/zero > $SFLOW_TASK_OUTPUT_DIR/fill 2>/dev/null; sleep 4; rm -f $SFLOW_TASK_OUTPUT_DIR/fill; echo done"]',
        '    - name: during',
        '      script: ["sleep 2; echo tick || true"]',
        '    - name: after',
        '      depends_on: [svc, during]',
        '      script: ["echo after"]',
        '',
      ].join('\n'),
    );
    const d = startDriver(['-f', 'wf.yaml'], mnt, {
      ...process.env,
      SFLOW_RUN_INDEX_DIR: join(dir, 'index'),
    });
    await until('the task up', () => logHas(d.runDir(), 'svc', 'up'));
    const t0 = Date.now(); // the task fills the disk right after `up`
    const end = await d.done;
    const runDir = d.runDir()!;
    const c = checkLedger(runDir);
    expect(c.torn).toEqual([]);
    expect(c.opened).toBe(true);
    expect(end.code, d.out()).toBe(1);
    expect(d.out()).toMatch(/ENOSPC: no space left on device/);
    expect(d.out()).toMatch(/record file\(s\) could not be written/);
    await until('no process of the run', () => processesNaming(runDir).length === 0);
    rows.push({
      fault: 'the run folder’s disk fills mid-run',
      injected:
        'run folder on a 2 MiB tmpfs; a task fills it, holds it 4 s while another task ends, frees it',
      outcome: `a clear verdict: "✗ Workflow completed, but N of its record file(s) could not be written (… ENOSPC …)", exit 1; events.jsonl keeps whole lines${c.closed ? ' up to run_finished' : ' (its writes during the fault are lost)'}`,
      verdictS: Math.max(0, (end.at - t0) / 1000),
      left: processesNaming(runDir).length,
    });
  });
});

describe('docs/reliability.md', () => {
  it('holds the fault table this suite measured (SFLOW_UPDATE_RELIABILITY=1 rewrites it)', () => {
    expect(rows.length, 'faults measured in this run').toBeGreaterThan(0);
    for (const r of rows) expect(r.left, r.fault).toBe(0);
    if (process.env.SFLOW_UPDATE_RELIABILITY === '1') {
      expect(rows.map((r) => r.fault)).toHaveLength(6);
      writeTable(rows);
    }
    const doc = docRows();
    for (const r of rows)
      expect(doc, `docs/reliability.md lacks or differs for "${r.fault}"`).toContainEqual({
        fault: r.fault,
        injected: r.injected,
        outcome: r.outcome,
        left: r.left,
      });
    expect(readFileSync(RELIABILITY_DOC, 'utf8')).toContain('time to verdict');
  });
});
