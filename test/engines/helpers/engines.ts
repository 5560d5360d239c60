/**
 * Access to the real engines that scripts/engines/<engine>.sh started, for the suites under
 * test/engines/. Each script writes KEY=VALUE lines to ${SFLOW_ENGINES_DIR:-/tmp/sflow-engines}/<engine>.env.
 *
 *   const slurm = engine('slurm');
 *   describeWithEngines('srun operator', [slurm], () => {
 *     it('…', async () => { const r = await slurm.exec('srun', ['-N2', 'hostname']); … });
 *   });
 *
 * An engine that is not up (no env file, a missing key, or a failed liveness probe) makes the suite
 * skip with a one-line named reason; under SFLOW_REQUIRE_ENGINES=1 (.ci/run) it is an error instead.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa, type Options, type Result } from 'execa';
import { describe } from 'vitest';

export type EngineName = 'slurm' | 'docker' | 'ssh';

export interface Engine {
  name: EngineName;
  /** why the engine cannot be used; undefined when it is up */
  skip?: string;
  /** the settings from <engine>.env */
  env: Record<string, string>;
  /** one setting; throws when the env file lacks it */
  get(key: string): string;
  /** process.env + the settings (+ extra), for child processes */
  childEnv(extra?: Record<string, string>): NodeJS.ProcessEnv;
  /** a bounded child process with childEnv(); never rejects on a non-zero exit (check exitCode) */
  exec(file: string, args: string[], opts?: Options): Promise<Result>;
}

export const enginesDir = (): string => process.env.SFLOW_ENGINES_DIR || '/tmp/sflow-engines';

const REQUIRED: Record<EngineName, string[]> = {
  slurm: [
    'SLURM_CONF',
    'SFLOW_TEST_SLURM_NODES',
    'SFLOW_TEST_SLURM_GPUS_PER_NODE',
    'SFLOW_TEST_SLURM_PARTITION',
  ],
  docker: ['DOCKER_HOST', 'SFLOW_TEST_DOCKER_HOST_B', 'SFLOW_TEST_DOCKER_IMAGE'],
  ssh: [
    'SFLOW_TEST_SSH_CONFIG',
    'SFLOW_TEST_SSH_ALIAS_A',
    'SFLOW_TEST_SSH_ALIAS_B',
    'SFLOW_TEST_SSH_USER',
    'SFLOW_TEST_SSH_NONODE_USER',
    'SFLOW_TEST_SSH_KEY',
  ],
};

/** a quick synchronous check that the engine answers (bounded); returns why not, or undefined */
function probe(name: EngineName, env: Record<string, string>): string | undefined {
  const once = (what: string, file: string, args: string[], ok: (out: string) => boolean) => {
    try {
      const out = execFileSync(file, args, {
        env: { ...process.env, ...env },
        timeout: 20_000,
        stdio: ['ignore', 'pipe', 'pipe'],
        encoding: 'utf8',
      });
      return ok(out) ? undefined : `${what}: unexpected answer ${JSON.stringify(out.trim())}`;
    } catch (e) {
      const err = e as { stderr?: string; message?: string };
      return `${what} failed: ${(err.stderr || err.message || String(e)).trim().split('\n').pop()}`;
    }
  };
  // a second try: on this loaded 2-core machine one ssh handshake has been seen to stall past 15 s
  // while several suites start at once (CI, 2026-12-01); a second failure is a real answer
  const run = (what: string, file: string, args: string[], ok: (out: string) => boolean = () => true) =>
    once(what, file, args, ok) && once(what, file, args, ok);
  const checks: Record<EngineName, (() => string | undefined)[]> = {
    slurm: [() => run('scontrol ping', 'scontrol', ['ping'], (out) => /is UP/.test(out))],
    docker: ['DOCKER_HOST', 'SFLOW_TEST_DOCKER_HOST_B'].map(
      (k) => () =>
        run(`docker -H ${env[k]} version`, 'docker', [
          '-H',
          env[k],
          'version',
          '--format',
          '{{.Server.Version}}',
        ]),
    ),
    ssh: ['SFLOW_TEST_SSH_ALIAS_A', 'SFLOW_TEST_SSH_ALIAS_B'].map(
      (k) => () =>
        run(`ssh ${env[k]} true`, 'ssh', [
          '-F',
          env.SFLOW_TEST_SSH_CONFIG,
          `${env.SFLOW_TEST_SSH_USER}@${env[k]}`,
          'true',
        ]),
    ),
  };
  for (const check of checks[name]) {
    const why = check();
    if (why) return why;
  }
  return undefined;
}

export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) env[m[1]] = m[2];
  }
  return env;
}

const cache = new Map<EngineName, Engine>();

/** the engine's settings, or a skip reason; throws under SFLOW_REQUIRE_ENGINES=1 when it is not up */
export function engine(name: EngineName): Engine {
  const known = cache.get(name);
  if (known) return known;
  const file = join(enginesDir(), `${name}.env`);
  let env: Record<string, string> = {};
  let skip: string | undefined;
  if (!existsSync(file)) skip = `no ${file}`;
  else {
    env = parseEnvFile(readFileSync(file, 'utf8'));
    const missing = REQUIRED[name].filter((k) => !env[k]);
    skip = missing.length ? `${file} lacks ${missing.join(', ')}` : probe(name, env);
  }
  if (skip) {
    skip = `${name} engine is not up (${skip}); start it with scripts/engines/${name}.sh up`;
    if (process.env.SFLOW_REQUIRE_ENGINES === '1') throw new Error(`SFLOW_REQUIRE_ENGINES=1 but the ${skip}`);
  }
  const childEnv = (extra: Record<string, string> = {}) => ({ ...process.env, ...env, ...extra });
  const e: Engine = {
    name,
    skip,
    env,
    get(key) {
      const v = env[key];
      if (v === undefined) throw new Error(`${file} has no ${key}`);
      return v;
    },
    childEnv,
    exec: (cmd, args, opts = {}) =>
      execa(cmd, args, {
        timeout: 60_000,
        reject: false,
        ...opts,
        env: childEnv(opts.env as Record<string, string>),
      }),
  };
  cache.set(name, e);
  return e;
}

/** describe() when every engine is up; otherwise a skipped suite whose title and one warning say why */
export function describeWithEngines(title: string, engines: Engine[], body: () => void): void {
  const reason = engines.find((e) => e.skip)?.skip;
  if (!reason) {
    describe(title, body);
    return;
  }
  console.warn(`[engines] skipped "${title}": ${reason}`);
  describe.skip(`${title} (skipped: ${reason})`, body);
}
