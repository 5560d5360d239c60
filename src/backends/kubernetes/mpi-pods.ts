/** k8s_mpi (placeholder while being built). */
import type { LaunchRequest, TaskHandle } from '../backend.js';
import type { LaunchCore } from './task-pods.js';

export async function launchMpi(
  _core: LaunchCore,
  _req: LaunchRequest,
  _signal: AbortSignal,
): Promise<{ handle: TaskHandle; pods: string[]; viaMpiJob: boolean }> {
  throw new Error('k8s_mpi: not yet');
}
