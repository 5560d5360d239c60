/**
 * `sflow run` on the Docker backend, end to end against the real test engine: the shipped local
 * DAG, service + benchmark and sweep samples pass in containers by adding one backend fragment;
 * a failing task, Ctrl-C and a SIGKILLed driver (reaped by the next run) leave no container.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dockerLiveDriver, dockerRecoverRun } from '../../../src/backends/docker/recover-run.js';
import { REPO } from '../../helpers/cli.js';
import { sflowAsync } from '../../helpers/cli-async.js';
import { scratchDir } from '../../helpers/scratch.js';
import { processesWith, until, untilAsync } from '../../conformance/procs.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { buildHostbinImage, removeHostbinImage } from './fixture.js';
import { dockerFragment, dockerRuns } from './runs.js';
import { ledgerContainers } from './fixture.js';

const docker = engine('docker');
const SAMPLES = join(REPO, 'assets', 'samples', 'self_contained', 'local');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describeWithEngines('sflow run on the Docker backend', [docker], () => {
  const host = () => docker.get('DOCKER_HOST');
  let dir: string;
  let fragment: string;
  const env = () => docker.childEnv({ SFLOW_TASK_OUTPUT: 'never' });
  const runs = dockerRuns(docker, () => dir, env);
  const run = (args: string[]) => runs.sflow(['run', ...args]);
  const runDirs = () => readdirSync(join(dir, 'sflow_output')).map((d) => join(dir, 'sflow_output', d));
  /** the External Command Health section of a run's summary */
  const health = (runDir: string): string => {
    const summary = readFileSync(join(runDir, 'sflow_summary.log'), 'utf8');
    const start = summary.indexOf('External Command Health');
    return summary.slice(start, summary.indexOf('Command Logs', start));
  };
  /** containers a run's ledger names that still exist on the engine */
  const leftOf = async (runDir: string): Promise<string[]> => {
    const names = ledgerContainers(runDir);
    expect(names.length).toBeGreaterThan(0);
    return runs.existing(names);
  };

  beforeAll(async () => {
    await buildHostbinImage(docker, [host()]);
    dir = scratchDir('sflow-docker-cli-');
    fragment = join(dir, 'docker.yaml');
    writeFileSync(fragment, dockerFragment('box'));
  });
  afterAll(() => removeHostbinImage(docker, [host()]));

  it('the local DAG, service + benchmark and sweep samples pass in containers', async () => {
    const port = await freePort();
    for (const [sample, extra] of [
      ['dag.yaml', []],
      ['service_benchmark.yaml', ['-s', `PORT=${port}`]],
      ['variables_sweep.yaml', []],
    ] as const) {
      const r = await run(['-f', join(SAMPLES, sample), '-f', fragment, ...extra]);
      expect(r.code, `${sample}\n${r.stdout}\n${r.stderr}`).toBe(0);
    }
    const [dag, service, sweep] = runDirs().sort((a, b) => {
      const order = ['quickstart_dag', 'service_benchmark', 'variables_sweep'];
      return order.findIndex((o) => a.includes(o)) - order.findIndex((o) => b.includes(o));
    });
    expect(readdirSync(dag)).toContain('model.txt'); // written in a container, through the run dir mount
    expect(readFileSync(join(service, 'benchmark', 'benchmark.log'), 'utf8')).toContain(
      'completed 20 requests',
    );
    expect(readdirSync(sweep).filter((d) => d.startsWith('train')).length).toBeGreaterThan(1);
    for (const d of [dag, service, sweep]) expect(await leftOf(d)).toEqual([]);
    // healthy runs are reported healthy: inspects and removals of containers sflow itself removed
    // ("No such container") are expected answers, not failures
    for (const d of [dag, service, sweep])
      expect(health(d)).toMatch(/^Verdict: OK: \d+ call\(s\), none failed/m);
    // the containers really were Docker's: the ledger names sflow-p<driver pid>-<task>-<node>
    const ids = ledgerContainers(service);
    expect(ids.some((n) => /^sflow-p\d+-server-localhost$/.test(n))).toBe(true);
  });

  it('a failing task fails the run and leaves no container', async () => {
    const recipe = join(dir, 'fail.yaml');
    writeFileSync(
      recipe,
      'version: "0.1"\nworkflow:\n  name: dkfail\n  tasks:\n    - name: svc\n      script: ["echo up; exec sleep 300"]\n    - name: bad\n      script: ["sleep 1; echo bye; exit 3"]\n',
    );
    const r = await run(['-f', recipe, '-f', fragment]);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/bad/);
    const d = runDirs().find((x) => x.includes('dkfail'))!;
    expect(readFileSync(join(d, 'bad', 'bad.log'), 'utf8')).toBe('bye\n');
    expect(await leftOf(d)).toEqual([]);
    // a failing task is not a failing engine
    expect(health(d)).toMatch(/^Verdict: OK/m);
  });

  it('one real engine failure (injected into docker rm) makes the command health DEGRADED, naming it', async () => {
    // a wrapper around the real CLI that answers the run's first `rm` (both of its attempts) with
    // an engine error; the end-of-run sweep removes the container all the same
    const wrapper = join(dir, 'docker-flaky');
    const count = join(dir, 'rm-failures');
    writeFileSync(
      wrapper,
      [
        '#!/bin/sh',
        'for a in "$@"; do',
        `  if [ "$a" = rm ] && [ "$(wc -c < '${count}' 2>/dev/null || echo 0)" -lt 2 ]; then`,
        `    printf x >> '${count}'`,
        "    echo 'Error response from daemon: injected: driver failed removing container' >&2",
        '    exit 1',
        '  fi',
        'done',
        'exec docker "$@"',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const recipe = join(dir, 'flaky.yaml');
    writeFileSync(
      recipe,
      'version: "0.1"\nworkflow:\n  name: dkflaky\n  tasks:\n    - name: t\n      script: ["echo hi"]\n',
    );
    const r = await sflowAsync(['run', '-f', recipe, '-f', fragment], {
      cwd: dir,
      env: { ...env(), SFLOW_DOCKER_CLI: wrapper },
      timeoutMs: 120_000,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const d = runDirs().find((x) => x.includes('dkflaky'))!;
    const h = health(d);
    expect(h).toMatch(/^Verdict: DEGRADED: 1 of \d+ call\(s\) failed/m);
    expect(h).toMatch(
      /^ {2}\S*docker-flaky .*rm -f .*→ exit 1: Error response from daemon: injected: driver failed removing container$/m,
    );
    expect(await leftOf(d)).toEqual([]); // the retry removed it
  });

  it('SFLOW_BACKEND_JOB_ID is the run id and SFLOW_TASK_NODE_NAME the node, in each container', async () => {
    const recipe = join(dir, 'jobenv.yaml');
    writeFileSync(
      recipe,
      [
        'version: "0.1"',
        'workflow:',
        '  name: dkjobenv',
        '  tasks:',
        '    - name: two',
        '      resources: {nodes: {count: 2}}',
        '      script: [\'echo "job=$SFLOW_BACKEND_JOB_ID node=$SFLOW_TASK_NODE_NAME"\']',
        '',
      ].join('\n'),
    );
    const two = join(dir, 'two-nodes.yaml');
    writeFileSync(two, dockerFragment('box2', ['nodes: 2']));
    const r = await run(['-f', recipe, '-f', two]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const d = runDirs().find((x) => x.includes('dkjobenv'))!;
    const runId = basename(d);
    // one container per synthetic node, each with its own name (lines labelled by member)
    expect(
      readFileSync(join(d, 'two', 'two.log'), 'utf8')
        .trim()
        .split('\n')
        .sort(),
    ).toEqual([
      `[localhost #0] job=${runId} node=localhost`,
      `[localhost-1 #1] job=${runId} node=localhost-1`,
    ]);
  });

  it('--extra-docker-args reaches the container: a repeatable option adds, a single-use one replaces', async () => {
    const recipe = join(dir, 'xtra.yaml');
    writeFileSync(
      recipe,
      'version: "0.1"\nworkflow:\n  name: dkxtra\n  tasks:\n    - name: svc\n      script: [\'echo "X=$XTRA"; df -k /dev/shm | tail -1\']\n',
    );
    const shm = join(dir, 'shm.yaml');
    writeFileSync(
      shm,
      readFileSync(fragment, 'utf8').replace("'--network=host'", "'--network=host', '--shm-size=32m'"),
    );
    const r = await run([
      '-f', recipe, '-f', shm, '--extra-docker-args=--env=XTRA=from-cli', '--extra-docker-args', '--shm-size=96m',
    ]); // prettier-ignore
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/--shm-size=96m replaces --shm-size=32m/);
    const log = readFileSync(
      join(
        runDirs().find((x) => x.includes('dkxtra'))!,
        'svc',
        'svc.log',
      ),
      'utf8',
    );
    expect(log).toMatch(/^X=from-cli$/m);
    expect(log).toMatch(/\s98304\s/); // 96 MiB in KiB
  });

  it('the hardware monitor samples the local engine host beside the containers', async () => {
    const recipe = join(dir, 'mon.yaml');
    writeFileSync(
      recipe,
      'version: "0.1"\nworkflow:\n  name: dkmon\n  monitor:\n    interval: 500\n  tasks:\n    - name: work\n      script: ["sleep 3; echo done"]\n',
    );
    const r = await run(['-f', recipe, '-f', fragment]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/not sampled/);
    const mon = join(
      runDirs().find((x) => x.includes('dkmon'))!,
      'sflow_monitor',
    );
    expect(readdirSync(join(mon, 'raw')).filter((f) => f.startsWith('cpu_'))).toHaveLength(1);
    expect(
      readFileSync(join(mon, 'lifecycle', 'workflow', 'timeline.csv'), 'utf8').split('\n').length,
    ).toBeGreaterThan(2);
  });

  it('offload_task_logs on a multi-node task is warned about; its labelled lines still land through the clients', async () => {
    const frag = join(dir, 'offload.yaml');
    writeFileSync(frag, readFileSync(fragment, 'utf8') + '    offload_task_logs: true\n    nodes: 2\n');
    const recipe = join(dir, 'off.yaml');
    writeFileSync(
      recipe,
      'version: "0.1"\nworkflow:\n  name: dkoff\n  tasks:\n    - name: t\n      resources: {nodes: {count: 2}}\n      script: ["echo landed"]\n',
    );
    const r = await run(['-f', recipe, '-f', frag]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).toContain(
      "task 't' offload_task_logs (a multi-node task's lines are labelled by the driver): the container's output streams through its attached client",
    );
    const log = readFileSync(
      join(
        runDirs().find((x) => x.includes('dkoff'))!,
        't',
        't.log',
      ),
      'utf8',
    );
    expect(log.split('\n').filter(Boolean).sort()).toEqual([
      '[localhost #0] landed',
      '[localhost-1 #1] landed',
    ]);
  });

  /** starts a long run; resolves once its task printed `up` */
  function startLong(
    name: string,
    extraEnv: NodeJS.ProcessEnv = {},
    flags: string[] = [],
    script = '"echo up; exec sleep 300"',
  ) {
    const recipe = join(dir, `${name}.yaml`);
    writeFileSync(
      recipe,
      `version: "0.1"\nworkflow:\n  name: ${name}\n  tasks:\n    - name: svc\n      script: [${script}]\n`,
    );
    const up = (d: string) => {
      try {
        return readFileSync(join(d, 'svc', 'svc.log'), 'utf8').includes('up');
      } catch {
        return false;
      }
    };
    return runs.startLong(
      name,
      ['-f', recipe, '-f', fragment, ...flags],
      up,
      'the task did not come up',
      extraEnv,
    );
  }

  it('Ctrl-C stops the run (130) and leaves no container', async () => {
    const { child, exited, runDir } = await startLong('dkint');
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(await leftOf(runDir)).toEqual([]);
  });

  it("Ctrl-C gives the task's processes their own stop: a server's TERM handler finishes before its container ends", async () => {
    // a server under the task's shell (not exec'd) whose stop takes a second: before docker-init
    // passed TERM to the whole group and the shell waited, it was SIGKILLed with the container
    const server = `sh -c 'trap \\"sleep 1; echo stopped cleanly; exit 0\\" TERM; echo up; while :; do sleep 0.1; done'`;
    const { child, exited, runDir } = await startLong('dkgrace', {}, [], `"${server}", "echo after"`);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(readFileSync(join(runDir, 'svc', 'svc.log'), 'utf8')).toMatch(/^stopped cleanly$/m);
    expect(await leftOf(runDir)).toEqual([]);
  });

  it('a SIGKILLed driver leaves nothing: its container, the host collector and the reaper are gone, the run is marked lost', async () => {
    const { child, exited, runDir } = await startLong('dkdie', {}, ['--enable-workflow-monitor']);
    expect(await leftOf(runDir)).toHaveLength(1);
    expect(processesWith(runDir).length).toBeGreaterThan(0); // the collector (and the idle reaper)
    child.kill('SIGKILL');
    await exited;
    // polled (grace 5 s + 2 s on an idle machine; this one is loaded): the lifeline TERMs the
    // collector and wakes the reaper, whose `sflow recover` stops and removes the container
    await untilAsync(async () => (await leftOf(runDir)).length === 0, 60_000, 'the container removed');
    await until(() => processesWith(runDir).length === 0, 60_000, 'no process of the run left');
    const summary = readFileSync(join(runDir, 'sflow_summary.log'), 'utf8');
    expect(summary).toContain(`ended by a lost driver (pid ${child.pid}`);
    expect(readFileSync(join(runDir, 'sflow_reaper.log'), 'utf8')).toMatch(/svc#1: .*removed/);
  });

  // the worst case `sflow recover` exists for: a driver without a lifeline (SFLOW_LAUNCHER=inline:
  // as if the launcher had been killed with it), so nobody stopped its container
  it('sflow recover: a live driver is named; once it is dead, `sflow recover` removes its container', async () => {
    const { child, exited, runDir } = await startLong('dkrec', { SFLOW_LAUNCHER: 'inline' });
    expect(dockerLiveDriver(runDir)).toMatch(/^sflow driver pid \d+/);
    child.kill('SIGKILL');
    await exited;
    expect(dockerLiveDriver(runDir)).toBeUndefined();
    expect((await leftOf(runDir)).length).toBe(1); // still running: nobody stopped it
    const r = await runs.sflow(['recover', runDir]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/svc/);
    expect(await leftOf(runDir)).toEqual([]);
    // the run-level hook finds nothing more
    expect(
      await dockerRecoverRun(runDir, { env: env(), signal: AbortSignal.timeout(60_000), options: {} }),
    ).toEqual([]);
  });

  it("a SIGKILLed driver's containers are removed by the next run (no lifeline)", async () => {
    const { child, exited, runDir } = await startLong('dkkill', { SFLOW_LAUNCHER: 'inline' });
    child.kill('SIGKILL');
    await exited;
    expect((await leftOf(runDir)).length).toBe(1); // still running: nobody stopped it
    const r = await run(['-f', join(SAMPLES, 'hello_world.yaml'), '-f', fragment]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // the lost run's ledger is recovered first (sflow run recovers lost runs); reaping by pid catches the rest
    expect(await leftOf(runDir)).toEqual([]);
  });
});
