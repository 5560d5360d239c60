/**
 * A scope: what a phase of the run session runs under, and the one way it is stopped.
 *
 * - **cancel**: the first `cancel(cause)` records why, aborts `signal` and tells the listeners;
 *   the cause is a typed value (a signal, the workflow deadline, fail-fast) that the phases read
 *   instead of strings routed by hand. A later cancel request that comes from a signal forces
 *   (a second Ctrl-C): `forced` aborts and the force listeners are told.
 * - **deadline**: `deadline(ms, …)` cancels the scope when the time passes, unless it already
 *   stopped or ended (the deadline then changed nothing and says so by not firing).
 * - **non-cancellable**: `shield(name, boundMs)` makes a scope its parent's cancel does not reach
 *   (teardown: the resources are given back whatever stopped the run), bounded by its own
 *   deadline, and still forced when the parent is.
 * - **end**: the work finished on its own; later cancels change nothing, a signal still forces.
 *
 * Listeners added to a scope that is already cancelled (or forced) are called at once, so a phase
 * that starts late never misses the stop.
 */
import { SflowError } from '../util/sflow-error.js';

/** why a scope stopped */
export type CancelCause =
  | { kind: 'signal'; signal: string }
  | { kind: 'deadline'; reason: string }
  | { kind: 'fail_fast'; reason: string }
  /** a shielded scope's own bound passed */
  | { kind: 'bound'; reason: string };

export type ScopeEnd = CancelCause | { kind: 'end' };

/** The error a cancelled scope's signal aborts with: what `throwIfAborted` throws in a phase. */
export class ScopeCancelled extends SflowError {
  constructor(readonly stop: CancelCause) {
    super(
      `run.${stop.kind === 'signal' ? 'interrupted' : stop.kind}`,
      stop.kind === 'signal' ? `interrupted by ${stop.signal}` : stop.reason,
      { phase: 'run' },
    );
  }
}

type CancelListener = (cause: CancelCause) => void;

/** setTimeout's longest delay; longer deadlines are reached in steps */
const MAX_DELAY_MS = 2_147_483_647;
/** what forces a scope that no request cancelled first */
const FORCE_FALLBACK: CancelCause = { kind: 'signal', signal: 'SIGKILL' };

export class Scope {
  private readonly cancelCtl = new AbortController();
  private readonly forceCtl = new AbortController();
  private stopped: ScopeEnd | undefined;
  private requestCount = 0;
  private readonly onCancelFns = new Set<CancelListener>();
  private readonly onForceFns = new Set<CancelListener>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly detach: Array<() => void> = [];
  private lastRequest: CancelCause | undefined;
  /** the cause of the first force */
  private forcedWith: CancelCause | undefined;

  private constructor(readonly name: string) {}

  /** a scope stopped only through its own `cancel`, deadline or `end` */
  static root(name: string): Scope {
    return new Scope(name);
  }

  /** aborted when the scope is cancelled (not when it ends) */
  get signal(): AbortSignal {
    return this.cancelCtl.signal;
  }

  /** aborted by a cancel request after the first that came from a signal (or by `force`) */
  get forced(): AbortSignal {
    return this.forceCtl.signal;
  }

  /** how the scope stopped: its cancel cause, `end`, or undefined while it runs */
  get cause(): ScopeEnd | undefined {
    return this.stopped;
  }

  /** cancel requests so far (the first cancels, a signal after it forces) */
  get requests(): number {
    return this.requestCount;
  }

  /** Cancels the scope; true when this request is the one that stopped it. */
  cancel(cause: CancelCause): boolean {
    this.requestCount++;
    this.lastRequest = cause;
    if (!this.stopped) {
      this.stopped = cause;
      this.cancelCtl.abort(new ScopeCancelled(cause));
      for (const fn of [...this.onCancelFns]) fn(cause);
      return true;
    }
    if (cause.kind === 'signal') this.force(cause);
    return false;
  }

  /** No more grace: what is stopping is killed at once. */
  force(cause: CancelCause = this.lastRequest ?? FORCE_FALLBACK): void {
    if (!this.forcedWith) {
      this.forcedWith = cause;
      this.forceCtl.abort(cause);
    }
    for (const fn of [...this.onForceFns]) fn(cause);
  }

  /** The work finished on its own: false when the scope had already stopped. */
  end(): boolean {
    if (this.stopped) return false;
    this.stopped = { kind: 'end' };
    return true;
  }

  /** Called once with the cause when the scope is cancelled (at once when it already was). */
  onCancel(fn: CancelListener): () => void {
    const c = this.stopped;
    if (c && c.kind !== 'end') {
      fn(c);
      return () => undefined;
    }
    this.onCancelFns.add(fn);
    return () => this.onCancelFns.delete(fn);
  }

  /** Called on every forcing request (at once when the scope is already forced). */
  onForce(fn: CancelListener): () => void {
    // a late listener hears the cause the scope was first forced with
    if (this.forcedWith) fn(this.forcedWith);
    this.onForceFns.add(fn);
    return () => this.onForceFns.delete(fn);
  }

  /**
   * Cancels the scope with `cause()` when `ms` have passed (none when `ms` is not positive);
   * `fired` is called when that cancel stopped the scope.
   */
  deadline(ms: number | undefined, cause: () => CancelCause, fired?: () => void): void {
    if (!ms || ms <= 0) return;
    const end = Date.now() + ms;
    const step = (): void => {
      const left = end - Date.now();
      if (left > 0) {
        const t = setTimeout(
          () => {
            this.timers.delete(t);
            step();
          },
          Math.min(left, MAX_DELAY_MS),
        );
        this.timers.add(t);
        return;
      }
      if (this.cancel(cause())) fired?.();
    };
    step();
  }

  /**
   * A non-cancellable scope under this one: this scope's cancel does not reach it, its force
   * does (cancelling and forcing it at once); it cancels itself (`bound`) when `boundMs` pass.
   * The bound's timer is unref'd.
   */
  shield(name: string, boundMs: number, reason: string): Scope {
    const s = new Scope(name);
    const t = setTimeout(() => s.cancel({ kind: 'bound', reason }), boundMs);
    t.unref();
    s.timers.add(t);
    s.detach.push(
      this.onForce((c) => {
        s.cancel(c);
        s.force(c);
      }),
    );
    return s;
  }

  /** Clears the scope's timers and its links to a parent; its state stays readable. */
  dispose(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const d of this.detach.splice(0)) d();
  }
}
