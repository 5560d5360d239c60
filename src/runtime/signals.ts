/**
 * SIGINT/SIGTERM handling for the duration of one run (runtime.md 6.7): each signal is
 * handed to the orchestrator (first: cancel everything; second: kill at once). The handlers
 * are removed when the run ends, restoring Node's default behaviour.
 */
export type StopSignal = 'SIGINT' | 'SIGTERM';

export function installSignalHandlers(onSignal: (signal: StopSignal) => void): () => void {
  const handlers: Array<[StopSignal, () => void]> = (['SIGINT', 'SIGTERM'] as const).map((s) => [
    s,
    () => onSignal(s),
  ]);
  for (const [s, h] of handlers) process.on(s, h);
  return () => {
    for (const [s, h] of handlers) process.removeListener(s, h);
  };
}
