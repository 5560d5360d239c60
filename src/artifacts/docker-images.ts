/**
 * `docker://<image>` artifacts on a real run: before anything is allocated, the image is made
 * present on every Docker engine a task of the run starts containers on (the endpoints of the
 * plan's container launches: the local engine, each pool host's `ssh://` or `context:`). Per
 * engine and image, all at once: a bounded `docker image inspect`; a missing image is pulled
 * (`docker pull`, bounded by SFLOW_DOCKER_PULL_TIMEOUT_S, progress every 30 s) unless
 * `SFLOW_DOCKER_PULL=never`, which makes a missing image an error instead (an air-gapped pool
 * whose images are loaded by hand). Every problem is reported at once, naming engine and image.
 * The artifact's path is the image reference, for `image: ${{ artifacts.NAME.path }}`. Engines
 * sflow does not drive (Slurm's container plugin, Kubernetes' kubelet) pull images themselves.
 */
import { SflowError } from '../util/sflow-error.js';
import { containerCli, endpointArgs } from '../operators/docker-run.js';
import { IMAGE_SCHEME } from '../plan/artifacts.js';
import type { Plan, PlannedArtifact } from '../plan/types.js';
import { boundedExec, type ExecOutcome } from '../util/bounded-exec.js';

const PROGRESS_EVERY_MS = 30_000;

export type PullPolicy = 'missing' | 'never';

export interface ImageOptions {
  say: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

interface Engine {
  program: string;
  /** undefined: the CLI's own default endpoint */
  endpoint: string | undefined;
}

/** the engines the plan's containers start on, each once */
export function planEngines(plan: Plan, env: NodeJS.ProcessEnv): Engine[] {
  const seen = new Map<string, Engine>();
  for (const t of plan.tasks)
    for (const l of t.launch) {
      const c = l.container;
      if (!c) continue;
      const e = { program: c.program ?? containerCli(env), endpoint: c.host };
      seen.set(`${e.program}\u0000${e.endpoint ?? ''}`, e);
    }
  return [...seen.values()];
}

export function pullPolicy(env: NodeJS.ProcessEnv): PullPolicy {
  const v = (env.SFLOW_DOCKER_PULL ?? '').trim().toLowerCase();
  if (v === '' || v === 'missing') return 'missing';
  if (v === 'never') return 'never';
  throw new SflowError(
    'run.docker_pull',
    `SFLOW_DOCKER_PULL='${env.SFLOW_DOCKER_PULL}' is not 'missing' or 'never'`,
    {
      phase: 'usage',
    },
  );
}

const where = (e: Engine) => (e.endpoint ? e.endpoint : 'the local engine');
const lastLine = (program: string, r: ExecOutcome) =>
  r.timedOut
    ? 'timed out'
    : r.errorCode === 'ENOENT'
      ? `'${program}' is not installed here`
      : (r.stderr.trim().split('\n').filter(Boolean).at(-1) ??
        r.errorMessage ??
        `exit ${String(r.exitCode)}`);

/** one image on one engine: '' when present (or pulled), else the problem */
async function ensure(
  e: Engine,
  a: PlannedArtifact,
  policy: PullPolicy,
  o: ImageOptions,
  env: NodeJS.ProcessEnv,
  pulled: string[],
): Promise<string> {
  const run = (args: string[], timeoutMs: number, retries = 0) =>
    boundedExec(e.program, [...endpointArgs(e.endpoint), ...args], {
      timeoutMs,
      retries,
      signal: o.signal,
      env,
      cwd: '/',
    });
  const image = a.path;
  const inspect = await run(['image', 'inspect', '--format', '{{.Id}}', image], 30_000, 1);
  if (inspect.ok) return '';
  if (!/no such (image|object)/i.test(inspect.stderr))
    return `${where(e)}: cannot ask for ${image}: ${lastLine(e.program, inspect)}`;
  if (policy === 'never') return `${where(e)}: ${image} is not there and SFLOW_DOCKER_PULL=never`;
  const limitS = Number(env.SFLOW_DOCKER_PULL_TIMEOUT_S) > 0 ? Number(env.SFLOW_DOCKER_PULL_TIMEOUT_S) : 1800;
  o.say(`⇣ artifact '${a.name}': pulling ${image} on ${where(e)}`);
  const started = Date.now();
  const timer = setInterval(
    () =>
      o.say(
        `⏳ artifact '${a.name}': still pulling ${image} on ${where(e)} (${Math.round((Date.now() - started) / 1000)}s)`,
      ),
    PROGRESS_EVERY_MS,
  );
  timer.unref();
  try {
    const pull = await run(['pull', image], limitS * 1000);
    if (!pull.ok)
      return `${where(e)}: docker pull ${image} failed: ${pull.timedOut ? `not done within ${limitS}s (SFLOW_DOCKER_PULL_TIMEOUT_S)` : lastLine(e.program, pull)}`;
  } finally {
    clearInterval(timer);
  }
  pulled.push(where(e));
  return '';
}

/** Makes every docker:// image present on every engine of the plan; throws naming each problem. */
export async function stageDockerImages(plan: Plan, o: ImageOptions): Promise<void> {
  const images = plan.artifacts.filter((a) => a.scheme === IMAGE_SCHEME);
  if (images.length === 0) return;
  const env = o.env ?? process.env;
  const policy = pullPolicy(env);
  const engines = planEngines(plan, env);
  if (engines.length === 0) {
    for (const a of images)
      o.say(
        `ℹ artifact '${a.name}': no task of this run starts containers on a Docker engine, so ${a.path} is only passed on (Slurm's container plugin and Kubernetes pull images themselves)`,
      );
    return;
  }
  const problems: string[] = [];
  await Promise.all(
    images.map(async (a) => {
      const pulled: string[] = [];
      const found = await Promise.all(engines.map((e) => ensure(e, a, policy, o, env, pulled)));
      const bad = found.filter(Boolean);
      problems.push(...bad.map((p) => `artifact '${a.name}': ${p}`));
      if (bad.length === 0)
        o.say(
          `✓ artifact '${a.name}': ${a.path} present on ${engines.length} engine(s)${pulled.length ? ` (pulled on ${pulled.join(', ')})` : ''}`,
        );
    }),
  );
  o.signal?.throwIfAborted();
  if (problems.length)
    throw new SflowError(
      'run.artifact_image',
      `${problems.length} image problem(s):\n  ${problems.join('\n  ')}`,
      {
        phase: 'run',
        hint:
          policy === 'never'
            ? 'load the image on those engines (docker load / docker pull there), or allow pulling: unset SFLOW_DOCKER_PULL'
            : 'check the image name and that those engines can reach its registry (docker login there for a private one), or load it by hand (docker load) and set SFLOW_DOCKER_PULL=never',
      },
    );
}
