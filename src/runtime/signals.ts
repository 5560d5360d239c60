/**
 * Signal handling for the duration of one run (runtime.md 6.7): each signal is handed to the
 * orchestrator (first: cancel everything; second: kill at once). SIGHUP and SIGQUIT are handled
 * like SIGTERM, so no way of ending the driver short of SIGKILL skips the teardown (and SIGKILL is
 * covered by the launcher's lifeline) — except a SIGHUP that comes with the terminal hanging up (a
 * closed window, a dropped ssh session): losing the console never loses the run, so that one only
 * silences the console (util/console-loss.ts) and the run goes on to its normal end. The handlers
 * are removed when the run ends, restoring Node's default behaviour.
 */
import { markConsoleLost, terminalHungUp } from '../util/console-loss.js';

export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'SIGQUIT';

export const STOP_SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

export function installSignalHandlers(onSignal: (signal: StopSignal) => void): () => void {
  const handlers: Array<[StopSignal, () => void]> = STOP_SIGNALS.map((s) => [
    s,
    () => {
      if (s === 'SIGHUP' && terminalHungUp()) return markConsoleLost('the terminal hung up (SIGHUP)');
      onSignal(s);
    },
  ]);
  for (const [s, h] of handlers) process.on(s, h);
  const stopWatch = watchWrapperParent(() => {
    process.stderr.write(
      'sflow: the npm wrapper that started this driver is gone (it does not forward signals): stopping as on SIGTERM\n',
    );
    onSignal('SIGTERM');
  });
  return () => {
    for (const [s, h] of handlers) process.removeListener(s, h);
    stopWatch();
  };
}

/**
 * `npm exec` / `npx` / `npm run` exit on SIGTERM without forwarding it, leaving the driver running
 * under init. Started by one of them (npm_command), the driver checks its parent every
 * `intervalMs` and calls `onGone` once when it changed. `SFLOW_STOP_WITH_PARENT=1` watches any
 * parent, `=0` none.
 */
export function watchWrapperParent(
  onGone: () => void,
  o: { env?: NodeJS.ProcessEnv; intervalMs?: number; ppid?: () => number } = {},
): () => void {
  const env = o.env ?? process.env;
  const ppid = o.ppid ?? (() => process.ppid);
  const wanted =
    env.SFLOW_STOP_WITH_PARENT === '1' ||
    (env.SFLOW_STOP_WITH_PARENT !== '0' && (env.npm_command === 'exec' || env.npm_command === 'run-script'));
  const first = ppid();
  if (!wanted || first <= 1) return () => undefined;
  const timer = setInterval(() => {
    if (ppid() === first) return;
    clearInterval(timer);
    onGone();
  }, o.intervalMs ?? 500);
  timer.unref();
  return () => clearInterval(timer);
}
