/**
 * The exact `docker run` of one member (operators/docker-run.ts builds it from the launch spec's
 * container part) and the environment of its attached client: the driver's, this backend's
 * endpoint settings (DOCKER_HOST, DOCKER_CONTEXT, …), the task's variables — the values `-e KEY`
 * forwards — and, for a GPU task, what the container sees: its cards from 0 and, with the
 * registry, the claimed host indices. A spec of another operator (no container part) runs its
 * argv in the backend's image.
 */
import type { ClaimedGpus } from '../../gpu/task-claims.js';
import { containerName, dockerRunCommand, gpuDevicesArg } from '../../operators/docker-run.js';
import type { ContainerLaunch, NodeLaunchSpec } from '../../operators/launch-spec.js';
import type { BackendConfig, PlannedTask } from '../../plan/types.js';
import { containerDeviceIndices } from './gpus.js';
import type { DockerHostRef } from './hosts.js';

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

export interface MemberInput {
  task: PlannedTask;
  spec: NodeLaunchSpec;
  config: BackendConfig<'docker'>;
  hosts: DockerHostRef[];
  program: string;
  /** labels of the container (the driver's identity, `sflow.driver`) */
  labels?: Record<string, string>;
  got: ClaimedGpus | null;
  baseEnv: Record<string, string>;
  engineEnv: NodeJS.ProcessEnv;
}

function containerOf(i: MemberInput): ContainerLaunch {
  if (i.spec.container) return i.spec.container;
  const host = i.hosts.find((h) => h.node.name === i.spec.node?.name);
  return {
    ...(host?.endpoint ? { host: host.endpoint } : {}),
    name: containerName(process.pid, i.task.name, i.spec.node?.name ?? 'node0'),
    envKeys: Object.keys(i.spec.env),
    extraArgs: strings(i.config.extra_args),
    command: i.spec.argv,
  };
}

export function memberCommand(i: MemberInput): {
  container: ContainerLaunch;
  argv: string[];
  env: Record<string, string>;
} {
  const { task, spec, config, got } = i;
  const container = containerOf(i);
  const gpuEnv: Record<string, string> = {};
  if (task.gpus?.length) {
    gpuEnv.CUDA_VISIBLE_DEVICES = containerDeviceIndices(task.gpus.length);
    if (got) gpuEnv.SFLOW_GPU_PLAN = got.indices.join(',');
  }
  const cwd = spec.cwd ?? (config.workdir !== undefined ? String(config.workdir) : undefined);
  const argv = dockerRunCommand(
    {
      image: spec.image ?? String(config.image ?? '<image>'),
      mounts: spec.container ? spec.mounts : [...strings(config.mounts), ...spec.mounts],
      ...(cwd ? { cwd } : {}),
      container: { ...container, envKeys: [...new Set([...container.envKeys, ...Object.keys(gpuEnv)])] },
    },
    {
      program: i.program,
      ...(i.labels ? { labels: i.labels } : {}),
      ...(got ? { gpus: gpuDevicesArg(got.uuids) } : {}),
    },
  );
  const engineEnv = Object.fromEntries(
    Object.entries(i.engineEnv).filter(
      (e): e is [string, string] => e[0].startsWith('DOCKER_') && e[1] !== undefined,
    ),
  );
  return { container, argv, env: { ...i.baseEnv, ...engineEnv, ...spec.env, ...gpuEnv } };
}
