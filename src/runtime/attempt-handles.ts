/**
 * Bookkeeping of launched attempts for the orchestrator: the launch request handed to a backend,
 * status answers applied to a handle (engine names that arrived late, state changes, the end) with every change
 * recorded in the run's handle ledger, and how failing status calls are reported.
 */
import type { Backend, HandleStatus, LaunchRequest, TaskHandle } from '../backends/backend.js';
import type { RunEventInput } from '../events/events.js';
import type { OrchestratorOptions } from './orchestrator-types.js';
import type { TaskRt } from './task-state.js';

type Ledger = OrchestratorOptions['ledger'];

export function launchRequest(
  t: TaskRt,
  attempt: number,
  o: { baseEnv: Record<string, string>; cwd: string; runDir: string; ledger: Ledger },
): LaunchRequest {
  let recorded = false;
  return {
    task: t.plan,
    attempt,
    specs: t.plan.launch,
    baseEnv: o.baseEnv,
    cwd: o.cwd,
    runDir: o.runDir,
    record: (h) => {
      o.ledger?.(recorded ? 'updated' : 'launched', h);
      recorded = true;
    },
  };
}

/** Applies a status answer to its handle: ids that arrived, a new state, the end; each change goes to the ledger. */
export function applyHandleStatus(
  handle: TaskHandle,
  s: HandleStatus,
  ledger: Ledger,
  emit: (e: RunEventInput) => void,
): void {
  if (s.named && JSON.stringify(s.named.engine) !== JSON.stringify(handle.engine)) {
    handle.engine = s.named.engine;
    handle.remoteIds = [...s.named.remoteIds];
    ledger?.('updated', handle);
    emit({ type: 'task_handle', task: handle.task, attempt: handle.attempt, handle });
  }
  if (s.state === 'EXITED') {
    handle.state = 'EXITED';
    ledger?.('ended', handle);
  } else if (handle.state !== s.state) {
    handle.state = s.state;
    ledger?.('updated', handle);
  }
}

/** A warning for the first failing status call of a streak, then every tenth. */
export function pollErrorReporter(emit: (e: RunEventInput) => void) {
  return (b: Backend, message: string, streak: number): void => {
    if (streak !== 1 && streak % 10 !== 0) return;
    const again = streak > 1 ? ` (${streak} failures in a row)` : '';
    emit({
      type: 'log',
      level: 'warning',
      message: `status of backend '${b.name}' unavailable (${message}); retrying${again}`,
    });
  };
}
