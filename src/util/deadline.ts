/**
 * An AbortSignal that fires after `ms` or when any parent fires, with an explicit `dispose()`.
 * Used instead of `AbortSignal.any([…, AbortSignal.timeout(ms)])`, whose timeout can fail to
 * fire on Node 20 once nothing but the combined signal references it. The timer is unref'd, so
 * a forgotten deadline never keeps the process alive.
 */
export interface Deadline {
  signal: AbortSignal;
  dispose(): void;
}

export class DeadlineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeadlineError';
  }
}

export function deadline(ms: number, parents: Array<AbortSignal | undefined>, message: string): Deadline {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(new DeadlineError(message)), ms);
  timer.unref();
  const undo: Array<() => void> = [];
  for (const p of parents) {
    if (!p) continue;
    if (p.aborted) {
      ctl.abort(p.reason);
      break;
    }
    const on = () => ctl.abort(p.reason);
    p.addEventListener('abort', on, { once: true });
    undo.push(() => p.removeEventListener('abort', on));
  }
  return {
    signal: ctl.signal,
    dispose() {
      clearTimeout(timer);
      for (const u of undo) u();
    },
  };
}
