/**
 * Log offload on the real Docker engine: with `offload_task_logs: true` (Docker backend) or
 * `log_to_file: true` (a `docker_run` operator on the local backend) the container appends its
 * output to `<task>.log` itself, through the run directory's mount: while it runs, the log has
 * its lines and the engine's own log of the container (`docker logs`, what the attached client
 * streams) has none. Without offload the same check finds the lines in `docker logs` (the check
 * can tell the two apart). Either way the task log ends with the same bytes.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scratchDir } from '../../helpers/scratch.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { buildHostbinImage, HOST_MOUNTS, HOSTBIN_IMAGE, removeHostbinImage } from './fixture.js';
import { dockerFragment, dockerRuns } from './runs.js';
import { ledgerContainers } from './fixture.js';

const docker = engine('docker');
const SCRIPT =
  'echo first-line; while [ ! -e "$SFLOW_TASK_OUTPUT_DIR/go" ]; do sleep 0.2; done; echo last-line';

describeWithEngines('Docker log offload', [docker], () => {
  const host = () => docker.get('DOCKER_HOST');
  let dir: string;
  const runs = dockerRuns(
    docker,
    () => dir,
    () => docker.childEnv({ SFLOW_TASK_OUTPUT: 'never' }),
  );

  beforeAll(async () => {
    await buildHostbinImage(docker, [host()]);
    dir = scratchDir('sflow-docker-offload-');
  });
  afterAll(() => removeHostbinImage(docker, [host()]));

  const workflow = (name: string, operator?: string) =>
    [
      'workflow:',
      `  name: ${name}`,
      '  tasks:',
      '    - name: talk',
      ...(operator ? [`      operator: ${operator}`] : []),
      `      script: [${JSON.stringify(SCRIPT)}]`,
      '',
    ].join('\n');

  const onDockerBackend = (name: string, offload: boolean) => {
    const f = join(dir, `${name}.yaml`);
    writeFileSync(f, dockerFragment('dk', offload ? ['offload_task_logs: true'] : []) + workflow(name));
    return f;
  };
  const onLocalBackend = (name: string) => {
    const f = join(dir, `${name}.yaml`);
    writeFileSync(
      f,
      [
        'version: "0.1"',
        'operators:',
        '  - name: box',
        '    type: docker_run',
        `    image: ${HOSTBIN_IMAGE}`,
        `    mounts: [${HOST_MOUNTS.map((m) => `'${m}'`).join(', ')}]`,
        "    extra_args: ['--network=host']",
        '    log_to_file: true',
        workflow(name, 'box'),
      ].join('\n'),
    );
    return f;
  };

  /**
   * Starts the run, waits until the task log has its first line, reads `docker logs` of the
   * container, lets the task end; returns what the engine logged and the final task log.
   */
  async function observe(name: string, file: string) {
    const log = (d: string) => join(d, 'talk', 'talk.log');
    const long = await runs.startLong(
      name,
      ['-f', file],
      (d) => existsSync(log(d)) && readFileSync(log(d), 'utf8').includes('first-line'),
      'the task log never got its first line',
    );
    const container = ledgerContainers(long.runDir)[0];
    expect(container).toMatch(/^sflow-p\d+-talk-/);
    const engineLog = await docker.exec('docker', ['-H', host(), 'logs', container.split('@')[0]]);
    writeFileSync(join(long.runDir, 'talk', 'go'), '');
    const code = await Promise.race([long.exited, sleep(60_000).then(() => 'timeout')]);
    expect(code).toBe(0);
    return {
      engine: String(engineLog.stdout) + String(engineLog.stderr),
      log: readFileSync(log(long.runDir), 'utf8'),
      sflowLog: readFileSync(join(long.runDir, 'sflow.log'), 'utf8'),
    };
  }

  it('offload_task_logs: the container writes the task log; the attached client carries nothing', async () => {
    const dry = await runs.sflow(['run', '--dry-run', '-f', onDockerBackend('offon', true)]);
    // the line as a shell would take it: the redirect is quoted inside bash -lc's single quotes,
    // after the TERM trap (src/operators/graceful-stop.ts)
    expect(dry.stdout).toMatch(/bash -lc 'trap .* TERM\nexec >>'\\''\S*\/talk\/talk\.log'\\'' 2>&1/);
    const r = await observe('offon', onDockerBackend('offon', true));
    expect(r.engine).not.toContain('first-line');
    expect(r.log).toBe('first-line\nlast-line\n');
    expect(r.sflowLog).not.toContain('streams through its attached client');
  });

  it('without offload the same check finds the output in the engine log (streamed by the client)', async () => {
    const r = await observe('offoff', onDockerBackend('offoff', false));
    expect(r.engine).toContain('first-line');
    expect(r.log).toBe('first-line\nlast-line\n');
  });

  it('log_to_file on a docker_run operator of the local backend: the container writes the log', async () => {
    const r = await observe('offlocal', onLocalBackend('offlocal'));
    expect(r.engine).not.toContain('first-line');
    expect(r.log).toBe('first-line\nlast-line\n');
  });
});
