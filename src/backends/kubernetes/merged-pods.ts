/** Merged pods (placeholder while being built). */
import type {
  HandleStatus,
  Inspection,
  LaunchRequest,
  StopOptions,
  StopOutcome,
  TaskHandle,
} from '../backend.js';
import type { K8sRun } from './run-context.js';
import type { LaunchCore } from './task-pods.js';

export class MergedPods {
  constructor(
    private readonly run: () => K8sRun,
    private readonly push: (h: TaskHandle, s: HandleStatus) => void,
  ) {}
  has(_h: TaskHandle): boolean {
    return false;
  }
  status(_h: TaskHandle): HandleStatus | undefined {
    return undefined;
  }
  inspect(_h: TaskHandle): Inspection | undefined {
    return undefined;
  }
  onPod(_labels: Record<string, string>): void {}
  async stop(_h: TaskHandle[], _o: StopOptions, _s: AbortSignal): Promise<Map<string, StopOutcome>> {
    return new Map();
  }
}

export async function launchMerged(
  _core: LaunchCore,
  _m: MergedPods,
  _req: LaunchRequest,
  _signal: AbortSignal,
): Promise<TaskHandle> {
  throw new Error('merged pods: not yet');
}
