/**
 * Release removes every container the backend launched, ended ones included, on a real engine.
 * The race behind the pool Ctrl-C leak: a status poll sees the stopped containers ended and starts
 * their `rm`; the end of the teardown closes the status watch, which aborts that `rm` mid-call; the
 * release then skipped them as "finished". Here the `rm` is held open by a wrapper of the docker
 * CLI (SFLOW_DOCKER_CLI) until the poll is aborted, exactly as the closing watch does.
 */
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TaskHandle } from '../../../src/backends/backend.js';
import { DockerBackend } from '../../../src/backends/docker/docker-backend.js';
import { plannedTask } from '../../helpers/planned-task.js';
import { scratchDir } from '../../helpers/scratch.js';
import { describeWithEngines, engine } from '../helpers/engines.js';
import { buildHostbinImage, dockerCtx, dockerPlanned, removeHostbinImage } from './fixture.js';
import { handleContainers } from './fixture.js';

const docker = engine('docker');

describeWithEngines('Docker backend release', [docker], () => {
  let dir: string;
  beforeAll(() => buildHostbinImage(docker, [docker.get('DOCKER_HOST')]));
  afterAll(() => removeHostbinImage(docker, [docker.get('DOCKER_HOST')]));

  const exists = async (name: string) =>
    String((await docker.exec('docker', ['ps', '-a', '--format', '{{.Names}}'])).stdout)
      .split('\n')
      .includes(name);

  it('an ended container whose removal was cut short is removed by release', async () => {
    dir = scratchDir('sflow-docker-release-');
    const hold = join(dir, 'hold-rm');
    const started = join(dir, 'rm-started');
    const cli = join(dir, 'docker-slow-rm');
    // `rm` waits while the hold file exists (and says it started); everything else is the real CLI
    writeFileSync(
      cli,
      `#!/bin/sh\nfor a in "$@"; do if [ "$a" = rm ] && [ -e '${hold}' ]; then : >'${started}'; exec sleep 60; fi; done\nexec docker "$@"\n`,
    );
    chmodSync(cli, 0o755);
    writeFileSync(hold, '');
    const backend = new DockerBackend(
      dockerPlanned(),
      dockerCtx(docker.childEnv({ SFLOW_DOCKER_CLI: cli }), { runId: 'release' }),
    );
    mkdirSync(join(dir, 'quick'));
    const nodes = (await backend.allocate(AbortSignal.timeout(60_000), () => undefined)).nodes;
    const task = plannedTask(
      'quick',
      {
        backend: backend.name,
        backendType: 'docker',
        operator: { name: 'quick', type: 'bash', config: {} },
        script: 'echo done',
        argv: ['bash', '-c', 'echo done'],
        env: {},
        nodes: nodes.slice(0, 1),
      },
      dir,
    );
    let handle: TaskHandle | undefined;
    try {
      handle = await backend.launch(
        { task, attempt: 1, specs: task.launch, baseEnv: {}, cwd: dir, runDir: dir, record: () => undefined },
        AbortSignal.timeout(60_000),
      );
      const [name] = handleContainers(handle);
      // poll until the ended container's rm is under way, then abort that poll (the watch closing)
      const end = Date.now() + 60_000;
      while (!existsSync(started)) {
        expect(Date.now() < end, 'the ended container was never removed by a poll').toBe(true);
        const ac = new AbortController();
        const p = backend.poll([handle], ac.signal).catch(() => undefined);
        while (!existsSync(started)) {
          const got = await Promise.race([p, sleep(100).then(() => 'waiting' as const)]);
          if (got !== 'waiting') break; // still running: poll again
        }
        ac.abort();
        await p;
      }
      rmSync(hold);
      expect(await exists(name)).toBe(true); // the aborted rm left it there
      await backend.release(AbortSignal.timeout(60_000));
      expect(await exists(name)).toBe(false);
    } finally {
      rmSync(hold, { force: true });
      if (handle) await docker.exec('docker', ['rm', '-f', ...handleContainers(handle)]);
    }
  });
});
