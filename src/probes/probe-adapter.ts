/**
 * The orchestrator's ProbeDriver (probes/probe-driver.ts) on top of the checks and the
 * scheduler here: planned probe → check object → runProbeLoop, with the loop's outcome
 * mapped to the orchestrator's events.
 */

import type { CheckContext } from './kind.js';
import type { ProbeContext, ProbeDriver, ProbeLoop, ProbeLoopEvents } from './probe-driver.js';
import { DEFAULT_EACH_CHECK_TIMEOUT_MS, runProbeLoop } from './loop.js';
import { probeKind, type PlannedProbe } from './registry.js';
import type { CheckResult, ProbeCheck } from './types.js';

/**
 * The check object for one planned probe, from its kind; it describes itself as the kind
 * describes the probe (the text of events and of the readiness-deadline message).
 */
export function createProbeCheck(p: PlannedProbe, ctx: CheckContext): ProbeCheck {
  const kind = probeKind(p.kind);
  const inner = kind.check(p, ctx);
  const text = kind.describe(p, ctx.task.name);
  return { kind: p.kind, describe: () => text, check: (signal, ms) => inner.check(signal, ms) };
}

/** each_check_timeout in ms; 0 or missing → the 30 s default */
export function eachCheckMs(p: PlannedProbe): number {
  return p.eachCheckTimeoutS > 0 ? p.eachCheckTimeoutS * 1000 : DEFAULT_EACH_CHECK_TIMEOUT_MS;
}

export class ProbeAdapter implements ProbeDriver {
  /** the check a loop last created for a probe, so a final check continues its count */
  private readonly latest = new WeakMap<PlannedProbe, { check: ProbeCheck; logPath: string }>();

  start(probe: PlannedProbe, ctx: ProbeContext, ev: ProbeLoopEvents): ProbeLoop {
    const check = createProbeCheck(probe, ctx);
    this.latest.set(probe, { check, logPath: ctx.logPath });
    const readiness = probe.role === 'readiness';
    const threshold = readiness ? probe.successThreshold : probe.failureThreshold;
    const ac = new AbortController();
    void runProbeLoop({
      check,
      delayMs: probe.delayS * 1000,
      intervalMs: probe.intervalS * 1000,
      threshold,
      deadlineMs: readiness ? probe.timeoutS * 1000 : undefined,
      eachCheckTimeoutMs: eachCheckMs(probe),
      startedAt: ctx.startedAt,
      signal: ac.signal,
      label: `${probe.role} probe`,
      // the triggering check is reported through onTrigger only
      onResult: (r) => {
        if (r.consecutive < Math.max(1, threshold)) ev.onCheck({ ok: r.ok, detail: r.detail });
      },
    }).then((out) => {
      if (ac.signal.aborted) return;
      if (out.passed) ev.onTrigger(out.last);
      else if (out.limit) ev.onLimit?.(out.limit);
      else if (out.timedOut) ev.onDeadline(out.elapsedMs, out.last);
    });
    return { stop: () => ac.abort() };
  }

  async checkOnce(probe: PlannedProbe, ctx: ProbeContext): Promise<CheckResult> {
    const known = this.latest.get(probe);
    const check = known && known.logPath === ctx.logPath ? known.check : createProbeCheck(probe, ctx);
    const ms = eachCheckMs(probe);
    return check.check(AbortSignal.timeout(ms), ms);
  }
}

export function createProbeDriver(): ProbeDriver {
  return new ProbeAdapter();
}
