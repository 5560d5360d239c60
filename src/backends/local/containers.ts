/**
 * The container of a `docker_run` task on the local backend. The task is the attached `docker run`
 * client in a process group like any other; its container is named `sflow-p<pid>-<task>-<node>`
 * (operators/docker-run.ts) and outlives the client (`--sig-proxy=false`), so stopping the task
 * also removes the container by name, and the first container launch of a run removes the
 * containers of dead drivers (the same reaping as the Docker backend, ../container-engine.ts).
 */
import type { StopOptions, StopOutcome } from '../backend.js';
import { dockerRunCommand } from '../../operators/docker-run.js';
import type { NodeLaunchSpec } from '../../operators/launch-spec.js';
import {
  DockerEngine,
  DRIVER_LABEL,
  describe,
  driverPid,
  reapOrphans,
  type Endpoint,
} from '../container-engine.js';
import { driverId } from '../driver-identity.js';
import { isProcessAlive } from '../../util/process-liveness.js';
import type { LocalHandleState } from './handle-state.js';

export interface TaskContainer {
  engine: DockerEngine;
  host: Endpoint;
  name: string;
}

/**
 * The engine the task's own client talks to: the program the plan put in the container part (the
 * one its command line starts; `docker` when the part names none) and the task's environment.
 */
export function taskContainer(
  container: { name: string; host?: string; program?: string } | undefined,
  env: NodeJS.ProcessEnv,
): TaskContainer | undefined {
  if (!container) return undefined;
  return {
    engine: new DockerEngine({ ...env, SFLOW_DOCKER_CLI: container.program ?? 'docker' }),
    host: container.host,
    name: container.name,
  };
}

/**
 * The command line a task launches: for a `docker_run` container the same `docker run` line the
 * plan holds, built by the operator's own function with this driver's identity added
 * (`--label sflow.driver=…`, read by orphan reaping); any other task's planned line as it is.
 */
export function launchArgv(spec: NodeLaunchSpec, c: TaskContainer | undefined): string[] {
  return c && spec.container ? dockerRunCommand(spec, { labels: { [DRIVER_LABEL]: driverId() } }) : spec.argv;
}

/** bounded `docker rm -f <name>`; an error line, or undefined when removed or already gone */
export async function removeContainer(c: TaskContainer, signal: AbortSignal): Promise<string | undefined> {
  const r = await c.engine.rm(c.host, [c.name], signal);
  // gone, or going (its `--rm` removal runs): the normal end of a stopped container, nothing to report
  if (r.ok || /no such container|removal of container \S+ is already in progress/i.test(r.stderr))
    return undefined;
  return `could not remove container ${c.name}: ${describe(r)}`;
}

/** once per run and engine endpoint: the containers of dead drivers (their log lines) */
export class ContainerReaper {
  private readonly done = new Set<string>();

  async reap(c: TaskContainer, signal: AbortSignal): Promise<string[]> {
    const key = `${c.engine.program} ${c.host ?? ''}`;
    if (this.done.has(key)) return [];
    this.done.add(key);
    return reapOrphans(c.engine, [c.host], signal);
  }
}

/** the container a recorded handle's engine state names, on the engine of this environment */
export function recordedContainer(
  state: LocalHandleState,
  env: NodeJS.ProcessEnv,
): TaskContainer | undefined {
  const name = state.container;
  return name ? { engine: new DockerEngine(env), host: undefined, name } : undefined;
}

/**
 * `sflow recover` of a dead driver's `docker_run` task: its container outlives the attached client
 * (the launcher's lifeline ended that), so it is stopped (TERM, the grace, KILL; or killed at once)
 * when it still runs, then removed. A name whose driver pid is alive again belongs to that driver.
 */
export async function recoverContainer(
  c: TaskContainer,
  opts: StopOptions,
  signal: AbortSignal,
): Promise<{ found: boolean; stop?: StopOutcome; detail: string }> {
  const pid = driverPid(c.name);
  if (pid !== undefined && pid !== process.pid && isProcessAlive(pid))
    return { found: false, detail: `container ${c.name}: its driver pid ${pid} runs again, left alone` };
  const st = (await c.engine.inspect(c.host, [c.name], signal)).get(c.name);
  if (!st) return { found: false, detail: `no container ${c.name} left` };
  const running = st.status !== 'exited' && st.status !== 'dead';
  const t0 = Date.now();
  if (running)
    await (opts.force
      ? c.engine.kill(c.host, [c.name], signal)
      : c.engine.stop(c.host, [c.name], opts.graceMs, signal));
  const error = await removeContainer(c, signal);
  if (error) throw new Error(error);
  if (!running) return { found: false, detail: `removed ended container ${c.name}` };
  const stop: StopOutcome = {
    signals: opts.force ? ['SIGKILL'] : ['SIGTERM'],
    gone: true,
    alreadyGone: false,
    elapsedMs: Date.now() - t0,
  };
  return { found: true, stop, detail: `container ${c.name} stopped and removed` };
}
