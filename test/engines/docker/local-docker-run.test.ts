/**
 * `docker_run` on the *local* backend against the real test engine: the run directory is mounted at
 * its own path (outputs land), two concurrent runs get distinct container names, Ctrl-C removes the
 * run's container, a SIGKILLed driver's container is reaped by the next run and removed by
 * `sflow recover`.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readHandleLedger } from '../../../src/events/handle-ledger.js';
import { BIN } from '../../helpers/cli.js';
import { sflowAsync } from '../../helpers/cli-async.js';
import { scratchDir } from '../../helpers/scratch.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { buildHostbinImage, HOST_MOUNTS, HOSTBIN_IMAGE, removeHostbinImage } from './fixture.js';

const docker = engine('docker');

describeWithEngines('docker_run on the local backend', [docker], () => {
  const host = () => docker.get('DOCKER_HOST');
  let dir: string;
  const env = () => docker.childEnv({ SFLOW_TASK_OUTPUT: 'never' });
  const runDir = (name: string): string | undefined => {
    try {
      const d = readdirSync(join(dir, 'sflow_output')).find((x) => x.includes(name));
      return d ? join(dir, 'sflow_output', d) : undefined;
    } catch {
      return undefined;
    }
  };
  const containersOf = (d: string) =>
    readHandleLedger(join(d, 'handles.jsonl')).all.flatMap((h) => h.remoteIds);
  const existing = async (names: string[]) => {
    const r = await docker.exec('docker', ['-H', host(), 'ps', '-a', '--format', '{{.Names}}']);
    const all = String(r.stdout).split('\n');
    return names.filter((n) => all.includes(n));
  };

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
  async function startLong(name: string) {
    const file = recipe(
      name,
      'echo $HOSTNAME > $SFLOW_WORKFLOW_OUTPUT_DIR/landed.txt; echo up; exec sleep 300',
    );
    const child = spawn(process.execPath, [BIN, 'run', '-f', file], {
      cwd: dir,
      env: env(),
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const end = Date.now() + 60_000;
    for (;;) {
      const d = runDir(name);
      let landed = '';
      try {
        landed = d ? readFileSync(join(d, 'landed.txt'), 'utf8') : '';
      } catch {
        /* not yet */
      }
      if (d && landed.trim()) return { child, exited, dir: d };
      if (Date.now() > end) {
        child.kill('SIGKILL');
        throw new Error(`${name}: the container wrote nothing into the run directory`);
      }
      await sleep(200);
    }
  }

  beforeAll(async () => {
    await buildHostbinImage(docker, [host()]);
    dir = scratchDir('sflow-docker-local-');
  });
  afterAll(() => removeHostbinImage(docker, [host()]));

  it('two concurrent runs: outputs land, names differ; Ctrl-C and a SIGKILLed driver leave no container', async () => {
    const [a, b] = await Promise.all([startLong('ldra'), startLong('ldrb')]);
    const [na, nb] = [containersOf(a.dir), containersOf(b.dir)];
    expect(na).toHaveLength(1);
    expect(nb).toHaveLength(1);
    expect(na[0]).toMatch(/^sflow-p\d+-svc-localhost$/);
    expect(na[0]).not.toBe(nb[0]);
    expect(await existing([...na, ...nb])).toEqual([...na, ...nb]);

    a.child.kill('SIGINT');
    expect(await a.exited).toBe(130);
    expect(await existing(na)).toEqual([]);
    expect(await existing(nb)).toEqual(nb); // the other run's container is untouched

    b.child.kill('SIGKILL');
    await b.exited;
    expect(await existing(nb)).toEqual(nb); // --sig-proxy=false: nobody stopped it yet
    const r = await sflowAsync(
      ['run', '-f', recipe('ldrc', 'echo done > $SFLOW_WORKFLOW_OUTPUT_DIR/c.txt')],
      {
        cwd: dir,
        env: env(),
        timeoutMs: 120_000,
      },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(readFileSync(join(runDir('ldrc')!, 'c.txt'), 'utf8')).toBe('done\n');
    expect(await existing(nb)).toEqual([]);
    expect(await existing(containersOf(runDir('ldrc')!))).toEqual([]); // --rm
  });

  it("sflow recover stops and removes a SIGKILLed driver's docker_run container", async () => {
    const d = await startLong('ldrd');
    const names = containersOf(d.dir);
    expect(names).toHaveLength(1);
    d.child.kill('SIGKILL');
    await d.exited;
    expect(await existing(names)).toEqual(names); // its client is gone, the container is not
    const r = await sflowAsync(['recover', d.dir], { cwd: dir, env: env(), timeoutMs: 120_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(await existing(names)).toEqual([]);
    const again = await sflowAsync(['recover', d.dir], { cwd: dir, env: env(), timeoutMs: 120_000 });
    expect(again.code, again.stdout + again.stderr).toBe(0);
  });
});
