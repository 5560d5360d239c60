/**
 * `docker_run` (backends.md §6.4, §3.4–3.6): one container per assigned host. The operator gives
 * each node's launch spec a `container` part (name, endpoint, `--gpus`, env keys, extra args, the
 * command inside) and the exact `docker run` command line built from it; the Docker backend builds
 * the command it runs with the same function (`dockerRunCommand`), so `--dry-run` shows what runs.
 * The CLI program is the controller's `SFLOW_DOCKER_CLI` (e.g. `podman`; default `docker`), read
 * by the plan (`OperatorInput.containerCli`) and kept in the container part, so the dry-run line,
 * the command that runs and the engine calls that stop and remove the container name one program.
 * The launch-time differences: GPUs the reservation registry claimed replace the planned indices
 * in `--gpus` (their UUIDs), and the backend adds the driver's identity as a label after the name
 * (`--label sflow.driver=<host>:<pid>:<start time>`, what orphan reaping reads: the
 * `labels` option of `dockerRunCommand`).
 */
import { TERM_TRAP_LINE } from './graceful-stop.js';
import type { ContainerLaunch, NodeLaunchSpec } from './launch-spec.js';
import type { OperatorConfig, OperatorExtras, OperatorInput, OperatorNode } from './types.js';

type DockerRunInput = OperatorInput<'docker_run'>;

type Obj = Record<string, unknown>;

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** The container CLI program of an environment: `SFLOW_DOCKER_CLI` (podman takes the same verbs), else `docker`. */
export const containerCli = (env: Readonly<Record<string, string | undefined>>): string =>
  env.SFLOW_DOCKER_CLI?.trim() || 'docker';

/** Docker allows `[a-zA-Z0-9][a-zA-Z0-9_.-]*` in names. */
export function containerNamePart(s: string): string {
  const clean = s.replace(/[^A-Za-z0-9_.-]/g, '_');
  return /^[A-Za-z0-9]/.test(clean) ? clean : `x${clean}`;
}

/** `sflow-p<driver pid>-` — every container of one driver starts with it (orphan reaping reads it). */
export const containerPrefix = (pid: number): string => `sflow-p${pid}-`;

/** `sflow-p<pid>-<task>-<node>` (backends.md §3.5; the node's name). */
export function containerName(pid: number, task: string, node: string): string {
  return `${containerPrefix(pid)}${containerNamePart(task)}-${containerNamePart(node)}`;
}

/** The pool host entry a node stands for (by name, then by position), if the backend has hosts. */
export function hostOf(backendConfig: Obj, node: OperatorNode | undefined): Obj | undefined {
  const hosts = Array.isArray(backendConfig.hosts) ? (backendConfig.hosts as Obj[]) : [];
  if (!node || hosts.length === 0) return undefined;
  return hosts.find((h) => h.name === node.name) ?? hosts[node.index];
}

/** How an endpoint names a docker context (a pool host's 0.3.1 `context:`): `context:<name>`. */
export const CONTEXT_ENDPOINT = 'context:';

/**
 * `ssh://[user@]address` of a pool host (0.3.1's `docker_host: ssh://…` kept as written), or
 * `context:<name>` for a host reached through a docker context (0.3.1's `context:`).
 */
export function hostEndpoint(host: Obj | undefined): string | undefined {
  if (!host) return undefined;
  if (typeof host.docker_host === 'string') return host.docker_host;
  if (typeof host.context === 'string') return `${CONTEXT_ENDPOINT}${host.context}`;
  const address = host.address ?? host.name;
  if (address === undefined) return undefined;
  return `ssh://${typeof host.user === 'string' && host.user ? `${host.user}@` : ''}${String(address)}`;
}

/** the CLI's global options that select an endpoint: `--context <name>` or `-H <url>` (none: its default) */
export function endpointArgs(endpoint: string | undefined): string[] {
  if (!endpoint) return [];
  return endpoint.startsWith(CONTEXT_ENDPOINT)
    ? ['--context', endpoint.slice(CONTEXT_ENDPOINT.length)]
    : ['-H', endpoint];
}

/** `--gpus` (or `--gpus=…`) in a list of raw docker arguments */
export const grantsGpus = (args: string[]): boolean =>
  args.some((a) => a === '--gpus' || a.startsWith('--gpus='));

/**
 * The `--gpus` value for a device list, with the literal double quotes docker's CSV parser needs
 * (backends.md §3.6): the argv element is `"device=ID1,ID2"`.
 */
export const gpuDevicesArg = (ids: Array<string | number>): string => `"device=${ids.join(',')}"`;

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** log offload asked for: the operator's `log_to_file`, else the backend's `offload_task_logs` */
export function offloadAsked(
  config: Pick<OperatorConfig<'docker_run'>, 'log_to_file'>,
  backendConfig: Obj,
): boolean {
  const v = config.log_to_file ?? backendConfig.offload_task_logs;
  return v === true || v === 'true';
}

/**
 * Why the container cannot write the task log itself (undefined: it can): it needs the run
 * directory mounted at its own path (a local engine, `auto_mount_runtime_dirs` on) and must be
 * the task's only container (members of a multi-node task get their lines labelled by the driver).
 */
export function offloadBlocked(
  input: Pick<DockerRunInput, 'config' | 'backendConfig' | 'nodes' | 'env' | 'logPath'>,
): string | undefined {
  const hosts = Array.isArray(input.backendConfig.hosts) ? (input.backendConfig.hosts as Obj[]) : [];
  if (hosts.length > 0) return 'a pool host does not mount the run directory';
  if (input.config.auto_mount_runtime_dirs === false) return 'auto_mount_runtime_dirs is false';
  if (input.nodes.length > 1) return "a multi-node task's lines are labelled by the driver";
  if (!input.logPath || !input.env.SFLOW_WORKFLOW_OUTPUT_DIR) return 'the task has no log in a run directory';
  return undefined;
}

function containerFor(input: DockerRunInput, node: OperatorNode | undefined, env: Obj): ContainerLaunch {
  const { config, backendConfig, gpus } = input;
  const host = hostOf(backendConfig, node);
  const endpoint = hostEndpoint(host);
  const extraArgs = [
    ...strings(backendConfig.extra_args),
    ...strings(host?.extra_args),
    ...strings(config.extra_args),
  ];
  const gpuArg =
    gpus && gpus.length ? gpuDevicesArg(gpus) : config.gpus !== undefined ? String(config.gpus) : undefined;
  const logFile = offloadAsked(config, backendConfig) && !offloadBlocked(input) ? input.logPath : undefined;
  return {
    program: input.containerCli ?? 'docker',
    ...(endpoint ? { host: endpoint } : {}),
    name: containerName(process.pid, input.task, node?.name ?? 'node0'),
    ...(gpuArg !== undefined ? { gpus: gpuArg } : {}),
    // the one constant value is written out (no secret; the dry-run shows what the container gets)
    envKeys: (config.pass_envs === false
      ? ['NVIDIA_VISIBLE_DEVICES'].filter((k) => k in env)
      : Object.keys(env)
    ).map((k) =>
      k === 'NVIDIA_VISIBLE_DEVICES' && env[k] === 'void' && input.env[k] === undefined ? `${k}=void` : k,
    ),
    extraArgs,
    command: [
      'bash',
      '-lc',
      `${TERM_TRAP_LINE}\n${logFile ? `exec >>${shq(logFile)} 2>&1\n` : ''}${input.script}`,
    ],
    ...(input.removeContainers ? { rm: true } : {}),
    ...(logFile ? { logFile } : {}),
  };
}

/**
 * Backend, host and operator mounts; on a local engine also the run directory at its own path
 * (`auto_mount_runtime_dirs`, default on; off for pool hosts, whose disks are elsewhere), so task
 * outputs and `SFLOW_WORKFLOW_OUTPUT_DIR` files land where the driver reads them.
 */
function mountsFor(input: DockerRunInput, node: OperatorNode | undefined): string[] {
  const { config, backendConfig, env } = input;
  const host = hostOf(backendConfig, node);
  const runDir = env.SFLOW_WORKFLOW_OUTPUT_DIR;
  const auto = config.auto_mount_runtime_dirs !== false && !host && runDir ? [`${runDir}:${runDir}`] : [];
  return [...auto, ...strings(backendConfig.mounts), ...strings(host?.mounts), ...strings(config.mounts)];
}

/**
 * CPU-only containers get `NVIDIA_VISIBLE_DEVICES=void` (images that bake `=all` see no GPU),
 * unless the task's arguments grant GPUs themselves (§3.6).
 */
function withGpuEnv(input: DockerRunInput, env: Record<string, string>): Record<string, string> {
  const args = [...strings(input.backendConfig.extra_args), ...strings(input.config.extra_args)];
  const hosts = Array.isArray(input.backendConfig.hosts) ? (input.backendConfig.hosts as Obj[]) : [];
  const hostArgs = hosts.flatMap((h) => strings(h.extra_args));
  const cpuOnly = !(input.gpus && input.gpus.length) && input.config.gpus === undefined;
  if (!cpuOnly || grantsGpus([...args, ...hostArgs]) || env.NVIDIA_VISIBLE_DEVICES !== undefined) return env;
  return { ...env, NVIDIA_VISIBLE_DEVICES: 'void' };
}

/** image, mounts, working directory and the container part, for the backend that runs them */
export const dockerRunExtras = (input: DockerRunInput): OperatorExtras => {
  const { config, backendConfig, nodes } = input;
  const workdir = config.workdir ?? backendConfig.workdir;
  const node = nodes[Number(input.env.SFLOW_TASK_NODE_INDEX ?? 0)] ?? nodes[0];
  const env = withGpuEnv(input, input.env);
  return {
    image: String(config.image ?? backendConfig.image ?? '<image>'),
    mounts: mountsFor(input, node),
    ...(workdir ? { cwd: String(workdir) } : {}),
    env,
    container: containerFor(input, node, env),
  };
};

export interface DockerCommandOptions {
  /** the CLI program (`docker`, `podman`); default: the container part's, else `docker` */
  program?: string;
  /** replaces the planned `--gpus` value (the registry's UUIDs) */
  gpus?: string;
  /** `--label KEY=VALUE` after `--name` (the driver's identity, added at launch) */
  labels?: Record<string, string>;
}

const labelArgs = (labels: Record<string, string> | undefined): string[] =>
  Object.entries(labels ?? {}).flatMap(([k, v]) => ['--label', `${k}=${v}`]);

/** The exact `docker run` command line of one container. */
export function dockerRunCommand(
  spec: Pick<NodeLaunchSpec, 'image' | 'mounts' | 'cwd' | 'container'>,
  o: DockerCommandOptions = {},
): string[] {
  const c = spec.container;
  if (!c) throw new Error('dockerRunCommand: the launch spec has no container part');
  const argv = [o.program ?? c.program ?? 'docker'];
  argv.push(...endpointArgs(c.host));
  // --sig-proxy=false: signals to the attached client (its launcher, a dying driver) never reach the
  // container; sflow ends containers through the engine (stop, recover, reaping)
  // --init with TINI_KILL_PROCESS_GROUP: docker-init (tini) passes `docker stop`'s TERM to the task
  // shell's whole process group, not to the shell alone (graceful-stop.ts: the shell waits for them)
  argv.push('run', ...(c.rm ? ['--rm'] : []), '--init', '-e', 'TINI_KILL_PROCESS_GROUP=1');
  argv.push('--sig-proxy=false', '--name', c.name);
  argv.push(...labelArgs(o.labels));
  const gpus = o.gpus ?? c.gpus;
  if (gpus !== undefined) argv.push('--gpus', gpus);
  if (spec.cwd) argv.push('-w', spec.cwd);
  for (const m of spec.mounts) argv.push('-v', m);
  for (const k of c.envKeys) argv.push('-e', k);
  argv.push(...c.extraArgs, spec.image ?? '<image>', ...c.command);
  return argv;
}

export const dockerRunArgv = (input: DockerRunInput): string[] => dockerRunCommand(dockerRunExtras(input));
