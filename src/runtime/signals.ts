/**
 * Signal handling for the duration of one run (runtime.md 6.7): each signal is handed to the
 * orchestrator (first: cancel everything; second: kill at once). SIGHUP (the terminal closed) and
 * SIGQUIT are handled like SIGTERM, so no way of ending the driver short of SIGKILL skips the
 * teardown (and SIGKILL is covered by the launcher's lifeline). The handlers are removed when the
 * run ends, restoring Node's default behaviour.
 */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'SIGQUIT';

export const STOP_SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

export function installSignalHandlers(onSignal: (signal: StopSignal) => void): () => void {
  const handlers: Array<[StopSignal, () => void]> = STOP_SIGNALS.map((s) => [s, () => onSignal(s)]);
  for (const [s, h] of handlers) process.on(s, h);
  return () => {
    for (const [s, h] of handlers) process.removeListener(s, h);
  };
}
