/**
 * Orphan reaping of `sflow-p<pid>-…` containers (backends.md §3.5): each container carries its
 * driver's `<host>:<pid>:<start time>` (label `sflow.driver`); only containers whose driver was a
 * process of THIS host that provably ended — pid gone, or the pid reused by a process that started
 * at another time — are removed. A container of a driver on another host sharing the pool host is
 * left alone whatever its pid means here, and so is one without the label.
 */
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  DockerEngine,
  DRIVER_LABEL,
  orphanVerdict,
  reapLevel,
  reapOrphans,
  type Endpoint,
} from '../../src/backends/container-engine.js';
import { memberCommand } from '../../src/backends/docker/member-command.js';
import { driverGone, driverId, parseDriverId } from '../../src/backends/driver-identity.js';
import { launchArgv, taskContainer } from '../../src/backends/local/containers.js';
import { processStartTime } from '../../src/util/process-liveness.js';
import { launchSpecs, OPERATORS } from '../../src/operators/index.js';
import { dockerRunCommand } from '../../src/operators/docker-run.js';
import type { PlannedTask } from '../../src/plan/types.js';
import type { ExecOutcome } from '../../src/util/bounded-exec.js';

const here = hostname();
const myStart = processStartTime(process.pid) ?? 0;
/** a pid that ran and ended (spawnSync reaps it) */
const deadPid = (): number => {
  const r = spawnSync('true');
  expect(r.pid).toBeGreaterThan(0);
  return r.pid;
};

const outcome = (ok: boolean): ExecOutcome => ({
  exitCode: ok ? 0 : 1,
  signal: null,
  stdout: '',
  stderr: ok ? '' : 'Error: boom',
  durationMs: 1,
  timedOut: false,
  attempts: 1,
  ok,
});

/** an engine whose endpoints hold the given containers (name → driver label, '' for none) */
class FakeEngine extends DockerEngine {
  readonly removed: Array<{ host: Endpoint; names: string[] }> = [];
  constructor(private readonly world: Map<Endpoint, Record<string, string>>) {
    super({});
  }
  override names(host: Endpoint, prefix: string): Promise<string[]> {
    return Promise.resolve(Object.keys(this.world.get(host) ?? {}).filter((n) => n.startsWith(prefix)));
  }
  override labels(host: Endpoint, names: string[], label: string): Promise<Map<string, string>> {
    expect(label).toBe(DRIVER_LABEL);
    const w = this.world.get(host) ?? {};
    return Promise.resolve(new Map(names.filter((n) => n in w).map((n) => [n, w[n]])));
  }
  override rm(host: Endpoint, names: string[]): Promise<ExecOutcome> {
    this.removed.push({ host, names });
    return Promise.resolve(outcome(true));
  }
}

describe('driver identity', () => {
  it('this driver: host, pid and /proc start time, parsed back', () => {
    expect(parseDriverId(driverId())).toEqual({ host: here, pid: process.pid, startTime: myStart });
    expect(parseDriverId('node-7.example:123:456')).toEqual({
      host: 'node-7.example',
      pid: 123,
      startTime: 456,
    });
    for (const bad of [undefined, '', 'host', 'host:12', 'host:x:1', ':12:1', 'host:0:1', 'host:12:-1'])
      expect(parseDriverId(bad), String(bad)).toBeUndefined();
  });

  it('gone only when a process of this host provably ended: pid gone, or reused (another start time)', () => {
    expect(driverGone(driverId())).toBe(false);
    expect(driverGone(`${here}:${process.pid}:0`)).toBe(false); // no start time recorded: the pid counts
    expect(driverGone(`${here}:${deadPid()}:${myStart}`)).toBe(true);
    if (myStart > 0) expect(driverGone(`${here}:${process.pid}:${myStart + 1}`)).toBe(true);
    // another host's driver: its pid means nothing here, dead or alive locally
    expect(driverGone(`elsewhere-${here}:${deadPid()}:1`)).toBe(false);
    expect(driverGone(`elsewhere-${here}:${process.pid}:1`)).toBe(false);
    expect(driverGone(undefined)).toBe(false);
    expect(driverGone('garbage')).toBe(false);
    // the host to judge for can be given
    expect(driverGone(`h2:${deadPid()}:1`, 'h2')).toBe(true);
  });
});

describe('orphan verdict', () => {
  it('reap, alive, elsewhere, unlabelled', () => {
    expect(orphanVerdict(driverId())).toBe('alive');
    expect(orphanVerdict(`${here}:${deadPid()}:${myStart}`)).toBe('reap');
    expect(orphanVerdict(`other-${here}:${deadPid()}:1`)).toBe('elsewhere');
    expect(orphanVerdict(undefined)).toBe('unlabelled');
    expect(orphanVerdict('not-an-id')).toBe('unlabelled');
    // the liveness check is asked only about this host's drivers
    const asked: string[] = [];
    const gone = (l: string) => (asked.push(l), true);
    expect(orphanVerdict('h1:5:6', { host: 'h1', gone })).toBe('reap');
    expect(orphanVerdict('h2:5:6', { host: 'h1', gone })).toBe('elsewhere');
    expect(asked).toEqual(['h1:5:6']);
  });
});

describe('reapOrphans', () => {
  it("removes only this host's dead drivers' containers; other hosts' and unlabelled ones are noted, not removed", async () => {
    const dead = deadPid();
    const a = 'ssh://a';
    const b = 'ssh://b';
    const world = new Map<Endpoint, Record<string, string>>([
      [
        a,
        {
          [`sflow-p${process.pid}-live-a`]: driverId(), // this very driver
          [`sflow-p${dead}-dead-a`]: `${here}:${dead}:${myStart}`, // a driver of this host that ended
          // the bug: judged by the local pid, a live driver on another machine lost its containers
          [`sflow-p${dead}-remote-a`]: `far-${here}:${dead}:77`,
          [`sflow-p${dead}-old-a`]: '', // no label: an older sflow
          'sflow-pool-cache': `${here}:${dead}:1`, // not a driver's name: never looked at
        },
      ],
      [b, { [`sflow-p${process.pid}-live-b`]: driverId() }],
    ]);
    const engine = new FakeEngine(world);
    const lines = await reapOrphans(engine, [a, b, a], AbortSignal.timeout(5_000));
    expect(engine.removed).toEqual([{ host: a, names: [`sflow-p${dead}-dead-a`] }]);
    expect(lines).toContain(`removed 1 container(s) of dead sflow drivers on ssh://a: sflow-p${dead}-dead-a`);
    expect(lines).toContain(
      `left 1 container(s) of sflow drivers on other hosts (far-${here}) on ssh://a alone: sflow-p${dead}-remote-a`,
    );
    expect(lines.find((l) => l.includes(`sflow-p${dead}-old-a`))).toMatch(
      /^left 1 container\(s\) without an sflow\.driver label on ssh:\/\/a alone/,
    );
    expect(lines).toHaveLength(3); // nothing about b: only live containers there
    // removing a dead driver's containers is routine (info); what is left for the user is a warning
    expect(lines.map(reapLevel)).toEqual(['info', 'warning', 'warning']);
  });

  it('pid reuse: a container named after this driver pid but made by an earlier process with that pid is reaped', async () => {
    if (myStart === 0) return; // no procfs: start times cannot tell them apart
    const name = `sflow-p${process.pid}-earlier-x`;
    const engine = new FakeEngine(
      new Map([[undefined, { [name]: `${here}:${process.pid}:${myStart + 5}` }]]),
    );
    const lines = await reapOrphans(engine, [undefined], AbortSignal.timeout(5_000));
    expect(engine.removed).toEqual([{ host: undefined, names: [name] }]);
    expect(lines).toEqual([`removed 1 container(s) of dead sflow drivers: ${name}`]);
  });

  it('labels unknown (the inspect failed): nothing is removed on a guess', async () => {
    const dead = deadPid();
    const engine = new FakeEngine(new Map([[undefined, { [`sflow-p${dead}-t-x`]: `${here}:${dead}:1` }]]));
    engine.labels = () => Promise.reject(new Error('docker inspect failed: timed out'));
    expect(await reapOrphans(engine, [undefined], AbortSignal.timeout(5_000))).toEqual([]);
    expect(engine.removed).toEqual([]);
  });
});

describe('the driver label on the command lines that run', () => {
  const [spec] = launchSpecs(OPERATORS.docker_run, {
    task: 't',
    type: 'docker_run',
    config: { image: 'img:1' },
    script: 'echo hi',
    nodes: [{ name: 'n0', ip: '10.0.0.1', index: 0 }],
    gpus: null,
    env: { SFLOW_TASK_NODE_INDEX: '0' },
    allocationId: '0',
    backendConfig: { type: 'docker' },
  });
  const name = spec.container!.name;
  const label = { [DRIVER_LABEL]: driverId() };

  it('right after --name, the planned line otherwise unchanged; the plan has none', () => {
    expect(spec.argv).not.toContain('--label'); // --dry-run prints the plan: unchanged
    const built = dockerRunCommand(spec, { labels: label });
    const at = built.indexOf('--name');
    expect(built.slice(at, at + 4)).toEqual(['--name', name, '--label', `sflow.driver=${driverId()}`]);
    expect([...built.slice(0, at + 2), ...built.slice(at + 4)]).toEqual(spec.argv);
  });

  it('Docker backend members and local docker_run tasks launch with this driver identity', () => {
    const { argv } = memberCommand({
      task: { name: 't', gpus: null } as unknown as PlannedTask,
      spec,
      config: { name: 'd', type: 'docker' },
      hosts: [],
      program: 'docker',
      labels: label,
      got: null,
      baseEnv: {},
      engineEnv: {},
    });
    expect(argv).toEqual(dockerRunCommand(spec, { labels: label }));
    const local = launchArgv(spec, taskContainer(spec.container, {}));
    expect(local).toEqual(dockerRunCommand(spec, { labels: label }));
    const bash = { ...spec, argv: ['bash', '-c', 'x'], container: undefined };
    expect(launchArgv(bash, undefined)).toEqual(['bash', '-c', 'x']);
  });
});
