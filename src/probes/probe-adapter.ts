/**
 * The orchestrator's ProbeDriver (probes/probe-driver.ts) on top of the checks and the
 * scheduler here: planned probe → check object → runProbeLoop, with the loop's outcome
 * mapped to the orchestrator's events.
 */

import type { PlannedProbe } from '../plan/types.js';
import type {
  ProbeCheck as CheckOutcome,
  ProbeContext,
  ProbeDriver,
  ProbeLoop,
  ProbeLoopEvents,
} from './probe-driver.js';
import { httpCheck } from './http.js';
import { logWatchCheck } from './log-watch.js';
import { DEFAULT_EACH_CHECK_TIMEOUT_MS, runProbeLoop } from './loop.js';
import { tcpPortCheck } from './tcp.js';
import type { ProbeCheck, ProbeTransport } from './types.js';

/** Hosts a tcp_port probe checks: every assigned node for `each`, else one host. */
export function tcpHosts(p: PlannedProbe): string[] {
  if (p.onNode === 'each' && p.hosts && p.hosts.length > 0) return p.hosts;
  return [p.host ?? p.hosts?.[0] ?? '127.0.0.1'];
}

/** The check object for one planned probe; `logPath` is the log a log_watch probe reads. */
export function createProbeCheck(p: PlannedProbe, logPath: string, transport?: ProbeTransport): ProbeCheck {
  switch (p.kind) {
    case 'tcp_port':
      return tcpPortCheck({ hosts: tcpHosts(p), port: p.port ?? 0, ...(transport ? { transport } : {}) });
    case 'http_get':
    case 'http_post':
      return httpCheck({
        method: p.kind === 'http_post' ? 'POST' : 'GET',
        url: p.url ?? '',
        headers: p.headers,
        body: p.body,
        ...(p.expectStatus ? { expectStatus: p.expectStatus } : {}),
        ...(p.bodyMatch !== undefined ? { bodyMatch: p.bodyMatch } : {}),
        ...(transport ? { transport } : {}),
      });
    case 'log_watch':
      return logWatchCheck({
        path: logPath,
        pattern: p.pattern ?? '',
        matchCount: p.matchCount,
        logTask: p.logTask,
      });
  }
}

/** each_check_timeout in ms; 0 or missing → the 30 s default */
export function eachCheckMs(p: PlannedProbe): number {
  return p.eachCheckTimeoutS > 0 ? p.eachCheckTimeoutS * 1000 : DEFAULT_EACH_CHECK_TIMEOUT_MS;
}

export class ProbeAdapter implements ProbeDriver {
  /** the check a loop last created for a probe, so a final check continues its count */
  private readonly latest = new WeakMap<PlannedProbe, { check: ProbeCheck; logPath: string }>();

  start(probe: PlannedProbe, ctx: ProbeContext, ev: ProbeLoopEvents): ProbeLoop {
    const check = createProbeCheck(probe, ctx.logPath, ctx.transport);
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

  async checkOnce(probe: PlannedProbe, ctx: ProbeContext): Promise<CheckOutcome> {
    const known = this.latest.get(probe);
    const check =
      known && known.logPath === ctx.logPath
        ? known.check
        : createProbeCheck(probe, ctx.logPath, ctx.transport);
    const ms = eachCheckMs(probe);
    return check.check(AbortSignal.timeout(ms), ms);
  }
}

export function createProbeDriver(): ProbeDriver {
  return new ProbeAdapter();
}
