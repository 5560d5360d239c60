/**
 * What a run on Docker records is what happened (issue 30): a container that sleeps 2 s and one
 * that sleeps 0.3 s have, in events.jsonl, the summary and the report, the durations and start
 * times the engine itself recorded (its `start` and `die` events, to the nanosecond). The
 * container names `--dry-run` prints are the ones the run creates, on the Docker backend and for
 * `docker_run` on the local backend (the driver's pid masked).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readHandleLedger } from '../../../src/events/handle-ledger.js';
import { scratchDir } from '../../helpers/scratch.js';
import { expectTimingRun, timingWorkflow, type EngineRecord } from '../../helpers/task-times.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { buildHostbinImage, HOST_MOUNTS, HOSTBIN_IMAGE, removeHostbinImage } from './fixture.js';
import { dockerFragment, dockerRuns } from './runs.js';
import { handleContainers } from './fixture.js';

const docker = engine('docker');

describeWithEngines('task times and names on Docker', [docker], () => {
  const host = () => docker.get('DOCKER_HOST');
  let dir: string;
  const env = () => docker.childEnv({ SFLOW_TASK_OUTPUT: 'never' });
  const runs = dockerRuns(docker, () => dir, env);
  const containersOf = (runDir: string): Map<string, string[]> => {
    const out = new Map<string, string[]>();
    for (const h of readHandleLedger(join(runDir, 'handles.jsonl')).all)
      if (h.attempt === 1) out.set(h.task, handleContainers(h));
    return out;
  };
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  beforeAll(async () => {
    await buildHostbinImage(docker, [host()]);
    dir = scratchDir('sflow-docker-times-');
  });
  afterAll(() => removeHostbinImage(docker, [host()]));

  /** the engine's `start` and `die` events of a container (its own record, kept after removal) */
  async function engineRecord(name: string, since: number): Promise<EngineRecord> {
    const r = await docker.exec('docker', [
      'events',
      '--since',
      String(Math.floor(since / 1000) - 1),
      '--until',
      String(Math.ceil(Date.now() / 1000) + 1),
      '--filter',
      `container=${name}`,
      '--format',
      '{{.Status}} {{.TimeNano}}',
    ]);
    const at = (status: string) => {
      const m = new RegExp(`^${status} (\\d+)$`, 'm').exec(String(r.stdout));
      return m ? Math.round(Number(BigInt(m[1]) / 1000n) / 1000) : NaN;
    };
    const rec = { start: at('start'), end: at('die') };
    expect(Number.isFinite(rec.start) && Number.isFinite(rec.end), `${name}: ${String(r.stdout)}`).toBe(true);
    return rec;
  }

  it('a 2 s and a 0.3 s container: durations and Gantt starts as the engine recorded them', async () => {
    const since = Date.now();
    const wf = file('times.yaml', timingWorkflow('dockertimes'));
    const r = await runs.sflow(['run', '-f', wf, '-f', file('box.yaml', dockerFragment('box'))]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const run = runs.runDirOf('dockertimes')!;
    const names = containersOf(run);
    expectTimingRun(run, {
      two: await engineRecord(names.get('two')![0], since),
      short: await engineRecord(names.get('short')![0], since),
    });
  });

  it('the dry-run names the containers the run creates (Docker backend and local docker_run)', async () => {
    const local = [
      'version: "0.1"',
      'backends: [{name: here, type: local, default: true}]',
      'operators:',
      '  - name: box',
      '    type: docker_run',
      `    image: ${HOSTBIN_IMAGE}`,
      `    mounts: [${HOST_MOUNTS.map((m) => `'${m}'`).join(', ')}]`,
      '',
    ].join('\n');
    const cases: Array<[string, string, string | undefined]> = [
      ['dockernames', dockerFragment('box'), undefined],
      ['localnames', local, 'box'],
    ];
    for (const [name, backend, op] of cases) {
      const args = [
        '-f',
        file(`${name}.yaml`, timingWorkflow(name, { operator: op })),
        '-f',
        file(`${name}-b.yaml`, backend),
      ];
      const dry = await runs.sflow(['run', ...args, '--dry-run']);
      expect(dry.code, dry.stderr).toBe(0);
      const planned = [...dry.stdout.matchAll(/--name (\S+)/g)].map((m) => m[1]);
      const r = await runs.sflow(['run', ...args]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const made = [...containersOf(runs.runDirOf(name)!).values()].flat();
      const mask = (list: string[]) => list.map((n) => n.replace(/^sflow-p\d+-/, 'sflow-p<pid>-')).sort();
      expect(
        mask(made),
        `${name}: ${readFileSync(join(runs.runDirOf(name)!, 'handles.jsonl'), 'utf8')}`,
      ).toEqual(mask(planned));
      expect(made.length, name).toBe(2);
    }
  });
});
