/**
 * `sflow run` against the Docker test engine, as the CLI suites (cli-run, gpus, local-docker-run)
 * drive it: a bounded run in the suite's folder, the run folder of a workflow, a long run started
 * in the background until it is up, and which containers of a list still exist on the engine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN } from '../../helpers/cli.js';
import { sflowAsync } from '../../helpers/cli-async.js';
import type { Engine } from '../helpers/engines.js';
import { HOST_MOUNTS, HOSTBIN_IMAGE } from './fixture.js';

/** the backend fragment that runs a recipe's tasks in the test image on the default engine */
export function dockerFragment(name: string, extra: string[] = []): string {
  return [
    'version: "0.1"',
    'backends:',
    `  - name: ${name}`,
    '    type: docker',
    '    default: true',
    ...extra.map((l) => `    ${l}`),
    `    image: ${HOSTBIN_IMAGE}`,
    `    mounts: [${HOST_MOUNTS.map((m) => `'${m}'`).join(', ')}]`,
    "    extra_args: ['--network=host']",
    '',
  ].join('\n');
}

export interface LongRun {
  child: ChildProcess;
  exited: Promise<number | null>;
  runDir: string;
}

export interface DockerRuns {
  /** `sflow <args>` in the suite's folder, bounded */
  sflow: (args: string[], timeoutMs?: number) => ReturnType<typeof sflowAsync>;
  /** the run folder whose name contains `name`, if there is one yet */
  runDirOf: (name: string) => string | undefined;
  /** `sflow run <args>` in the background; resolves once `up(runDir)` holds (60 s at most) */
  startLong: (
    name: string,
    args: string[],
    up: (runDir: string) => boolean,
    what: string,
    /** added to the driver's environment (`SFLOW_LAUNCHER: 'inline'`: a driver without a lifeline) */
    extraEnv?: NodeJS.ProcessEnv,
  ) => Promise<LongRun>;
  /** those of `names` that still exist as containers on the engine */
  existing: (names: string[]) => Promise<string[]>;
}

export function dockerRuns(docker: Engine, dir: () => string, env: () => NodeJS.ProcessEnv): DockerRuns {
  const runDirOf = (name: string): string | undefined => {
    try {
      const d = readdirSync(join(dir(), 'sflow_output')).find((x) => x.includes(name));
      return d ? join(dir(), 'sflow_output', d) : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    sflow: (args, timeoutMs = 120_000) => sflowAsync(args, { cwd: dir(), env: env(), timeoutMs }),
    runDirOf,
    async startLong(name, args, up, what, extraEnv = {}) {
      const child = spawn(process.execPath, [BIN, 'run', ...args], {
        cwd: dir(),
        env: { ...env(), ...extraEnv },
        stdio: 'ignore',
      });
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      const end = Date.now() + 60_000;
      for (;;) {
        const d = runDirOf(name);
        if (d && up(d)) return { child, exited, runDir: d };
        if (Date.now() > end) {
          child.kill('SIGKILL');
          throw new Error(`${name}: ${what}`);
        }
        await sleep(200);
      }
    },
    async existing(names) {
      const r = await docker.exec('docker', [
        '-H',
        docker.get('DOCKER_HOST'),
        'ps',
        '-a',
        '--format',
        '{{.Names}}',
      ]);
      const all = String(r.stdout).split('\n');
      return names.filter((n) => all.includes(n));
    },
  };
}
