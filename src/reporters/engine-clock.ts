/**
 * How far a backend's engine clock is from this host's, from the task times alone (no probing).
 * Every attempt bounds it: the engine's start (`at` of `task_started`) happened on this host's
 * clock between the submission and the moment the driver saw it running, and the engine's end
 * (`at` of `task_finished` / `task_retry`) between the submission and the moment the driver saw
 * the end. With offset = engine clock − host clock:
 *   start s: offset ∈ [s − seen running, s − submitted]
 *   end e:   offset ∈ [e − seen ended,   e − submitted]
 * The intersection over a backend's attempts is where its clock can be. Only an offset beyond
 * `SKEW_BOUND_MS` both ways is stated (an engine that reports whole seconds, such as Kubernetes,
 * is up to a second early by itself).
 */
import type { RunEvent } from '../events/events.js';

export const SKEW_BOUND_MS = 2_000;

export interface ClockBounds {
  backend: string;
  /** offset = engine clock − this host's clock lies in [lo, hi] (ms) */
  lo: number;
  hi: number;
  /** attempts that gave engine times */
  samples: number;
}

interface Open {
  backend: string;
  submitted: number;
  seenRunning?: number;
}

export class EngineClocks {
  private readonly backendOf = new Map<string, string>();
  private readonly open = new Map<string, Open>();
  private readonly bounds = new Map<string, ClockBounds>();

  apply(e: RunEvent): void {
    switch (e.type) {
      case 'run_plan':
        for (const t of e.tasks) this.backendOf.set(t.name, t.backend);
        break;
      case 'task_submitted': {
        const backend = this.backendOf.get(e.task);
        if (backend) this.open.set(key(e.task, e.attempt), { backend, submitted: e.t });
        break;
      }
      case 'task_started': {
        const o = this.open.get(key(e.task, e.attempt));
        if (!o) break;
        o.seenRunning = e.t;
        if (e.at !== undefined) this.bound(o.backend, e.at - e.t, e.at - o.submitted);
        break;
      }
      case 'task_finished':
      case 'task_retry': {
        const o = this.open.get(key(e.task, e.attempt));
        if (!o) break;
        this.open.delete(key(e.task, e.attempt));
        if (e.at !== undefined) this.bound(o.backend, e.at - e.t, e.at - o.submitted);
        break;
      }
      default:
        break;
    }
  }

  /** backends whose clock is provably off by more than the bound */
  skewed(bound = SKEW_BOUND_MS): ClockBounds[] {
    return [...this.bounds.values()].filter((b) => b.lo <= b.hi && (b.lo > bound || b.hi < -bound));
  }

  private bound(backend: string, lo: number, hi: number): void {
    const b = this.bounds.get(backend);
    if (!b) this.bounds.set(backend, { backend, lo, hi, samples: 1 });
    else {
      b.lo = Math.max(b.lo, lo);
      b.hi = Math.min(b.hi, hi);
      b.samples++;
    }
  }
}

const key = (task: string, attempt: number): string => `${task}\u0000${attempt}`;

/** One line per skewed backend for the summary. */
export function skewLine(b: ClockBounds): string {
  const s = (ms: number) => (ms / 1000).toFixed(1);
  const [a, z, how] = b.lo > 0 ? [b.lo, b.hi, 'ahead of'] : [-b.hi, -b.lo, 'behind'];
  return (
    `${b.backend}: the engine's clock is ${s(a)}..${s(z)}s ${how} this host's (from ${b.samples} task time(s)); ` +
    `task start/end times are the engine's, so durations are right but their place against this host's ` +
    `events (submission, readiness) is off by that much — sync the clocks (NTP/chrony)`
  );
}
