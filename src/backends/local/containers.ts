/**
 * The container of a `docker_run` task on the local backend. The task is the attached `docker run`
 * client in a process group like any other; its container is named `sflow-p<pid>-<task>-<node>`
 * (operators/docker-run.ts) and outlives the client (`--sig-proxy=false`), so stopping the task
 * also removes the container by name, and the first container launch of a run removes the
 * containers of dead drivers (the same reaping as the Docker backend, ../container-engine.ts).
 */
import { DockerEngine, describe, reapOrphans, type Endpoint } from '../container-engine.js';

export interface TaskContainer {
  engine: DockerEngine;
  host: Endpoint;
  name: string;
}

/** the engine the task's own `docker` client talks to: its program and its environment */
export function taskContainer(
  argv: string[],
  container: { name: string; host?: string } | undefined,
  env: NodeJS.ProcessEnv,
): TaskContainer | undefined {
  if (!container) return undefined;
  return {
    engine: new DockerEngine({ ...env, SFLOW_DOCKER_CLI: argv[0] }),
    host: container.host,
    name: container.name,
  };
}

/** bounded `docker rm -f <name>`; an error line, or undefined when removed or already gone */
export async function removeContainer(c: TaskContainer, signal: AbortSignal): Promise<string | undefined> {
  const r = await c.engine.rm(c.host, [c.name], signal);
  if (r.ok || /no such container/i.test(r.stderr)) return undefined;
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
