/**
 * `docker_run` on the *local* backend against the real test engine: the run directory is mounted at
 * its own path (outputs land), two concurrent runs get distinct container names, Ctrl-C removes the
 * run's container, a SIGKILLed driver's container is reaped by the next run and removed by
 * `sflow recover`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scratchDir } from '../../helpers/scratch.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { buildHostbinImage, HOST_MOUNTS, HOSTBIN_IMAGE, removeHostbinImage } from './fixture.js';
import { dockerRuns } from './runs.js';
import { ledgerContainers } from './fixture.js';

const docker = engine('docker');

describeWithEngines('docker_run on the local backend', [docker], () => {
  const host = () => docker.get('DOCKER_HOST');
  let dir: string;
  const env = () => docker.childEnv({ SFLOW_TASK_OUTPUT: 'never' });
  const runs = dockerRuns(docker, () => dir, env);
  const runDir = runs.runDirOf;
  const containersOf = ledgerContainers;
  const existing = runs.existing;

  function recipe(name: string, script: string): string {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      [
        'version: "0.1"',
        'backends:',
        '  - name: here',
        '    type: local',
        '    default: true',
        'operators:',
        '  - name: box',
        '    type: docker_run',
        `    image: ${HOSTBIN_IMAGE}`,
        `    mounts: [${HOST_MOUNTS.map((m) => `'${m}'`).join(', ')}]`,
        "    extra_args: ['--network=host']",
        'workflow:',
        `  name: ${name}`,
        '  tasks:',
        '    - name: svc',
        '      operator: box',
        `      script: [${JSON.stringify(script)}]`,
        '',
      ].join('\n'),
    );
    return file;
  }

  /** starts a long run; resolves once its container wrote into the run directory */
  async function startLong(name: string, extraEnv: NodeJS.ProcessEnv = {}) {
    const file = recipe(
      name,
      'echo $HOSTNAME > $SFLOW_WORKFLOW_OUTPUT_DIR/landed.txt; echo up; exec sleep 300',
    );
    const landed = (d: string) => {
      try {
        return readFileSync(join(d, 'landed.txt'), 'utf8').trim() !== '';
      } catch {
        return false;
      }
    };
    const r = await runs.startLong(
      name,
      ['-f', file],
      landed,
      'the container wrote nothing into the run directory',
      extraEnv,
    );
    return { child: r.child, exited: r.exited, dir: r.runDir };
  }

  beforeAll(async () => {
    await buildHostbinImage(docker, [host()]);
    dir = scratchDir('sflow-docker-local-');
  });
  afterAll(() => removeHostbinImage(docker, [host()]));

  it('two concurrent runs: outputs land, names differ; Ctrl-C and a SIGKILLed driver leave no container', async () => {
    const [a, b] = await Promise.all([startLong('ldra'), startLong('ldrb', { SFLOW_LAUNCHER: 'inline' })]);
    const [na, nb] = [containersOf(a.dir), containersOf(b.dir)];
    expect(na).toHaveLength(1);
    expect(nb).toHaveLength(1);
    expect(na[0]).toMatch(/^sflow-p\d+-svc-localhost$/);
    expect(na[0]).not.toBe(nb[0]);
    expect(await existing([...na, ...nb])).toEqual([...na, ...nb]);
    // each container names the driver that made it (what orphan reaping reads): host, pid, start time
    for (const [c, run] of [
      [na[0], a],
      [nb[0], b],
    ] as const) {
      const l = await docker.exec('docker', [
        '-H',
        host(),
        'inspect',
        '--format',
        '{{index .Config.Labels "sflow.driver"}}',
        c,
      ]);
      expect(String(l.stdout).trim()).toMatch(new RegExp(`^${hostname()}:${run.child.pid}:[1-9]\\d*$`));
    }

    a.child.kill('SIGINT');
    expect(await a.exited).toBe(130);
    expect(await existing(na)).toEqual([]);
    expect(await existing(nb)).toEqual(nb); // the other run's container is untouched

    b.child.kill('SIGKILL');
    await b.exited;
    // b has no lifeline (SFLOW_LAUNCHER=inline) and --sig-proxy=false: nobody stopped it yet
    expect(await existing(nb)).toEqual(nb);
    const r = await runs.sflow(['run', '-f', recipe('ldrc', 'echo done > $SFLOW_WORKFLOW_OUTPUT_DIR/c.txt')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(readFileSync(join(runDir('ldrc')!, 'c.txt'), 'utf8')).toBe('done\n');
    expect(await existing(nb)).toEqual([]);
    expect(await existing(containersOf(runDir('ldrc')!))).toEqual([]); // --rm
  });

  it("sflow recover stops and removes a SIGKILLed driver's docker_run container (no lifeline)", async () => {
    const d = await startLong('ldrd', { SFLOW_LAUNCHER: 'inline' });
    const names = containersOf(d.dir);
    expect(names).toHaveLength(1);
    d.child.kill('SIGKILL');
    await d.exited;
    expect(await existing(names)).toEqual(names); // its client is gone, the container is not
    const r = await runs.sflow(['recover', d.dir]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(await existing(names)).toEqual([]);
    const again = await runs.sflow(['recover', d.dir]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
  });
});
