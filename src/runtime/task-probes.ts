/**
 * Probe wiring for one attempt of a task (config.md 5.9, runtime.md 6.5): every readiness
 * probe must pass for READY; a readiness deadline fails the task; any failure probe firing
 * fails it. Loop results are reported as `probe_result` events where `ok` means healthy
 * (a met readiness check, or a failure check that found nothing).
 */
import type { PlannedProbe } from '../plan/types.js';
import type { RunEventInput } from '../events/events.js';
import { describeProbe, type ProbeContext, type ProbeDriver } from '../probes/probe-driver.js';
import type { CheckResult } from '../probes/types.js';
import type { TaskRt } from './task-state.js';

export interface ProbeHooks {
  /** the attempt is still current and RUNNING/READY, no stop requested */
  live(): boolean;
  emit(e: RunEventInput): void;
  ctx(p: PlannedProbe): ProbeContext;
  /** every readiness probe has passed */
  ready(probes: string): void;
  /** the task must fail: readiness deadline, failure probe, or a probe that cannot run */
  fail(kind: 'readiness_timeout' | 'failure_probe' | 'probe_limit', reason: string): void;
}

export function startTaskProbes(t: TaskRt, driver: ProbeDriver, h: ProbeHooks): void {
  t.readyPassed = new Set();
  t.loops = [];
  const report = (p: PlannedProbe, r: CheckResult) =>
    h.emit({
      type: 'probe_result',
      task: t.plan.name,
      role: p.role,
      kind: p.kind,
      ok: p.role === 'readiness' ? r.ok : !r.ok,
      detail: r.detail,
      target: describeProbe(p, t.plan.name),
    });
  const reportLimit = (p: PlannedProbe, why: string) =>
    h.emit({
      type: 'probe_result',
      task: t.plan.name,
      role: p.role,
      kind: p.kind,
      ok: false,
      detail: why,
      target: describeProbe(p, t.plan.name),
      limit: why,
    });
  const readiness = t.plan.probes.readiness;
  readiness.forEach((p, i) => {
    const loop = driver.start(p, h.ctx(p), {
      onCheck: (r) => h.live() && report(p, r),
      onTrigger: (r) => {
        if (!h.live() || t.status !== 'RUNNING') return;
        report(p, r);
        t.readyPassed.add(i);
        if (t.readyPassed.size === readiness.length)
          h.ready(readiness.map((p) => describeProbe(p, t.plan.name)).join(' + '));
      },
      // it can never pass now: the task fails at once rather than at its deadline
      onLimit: (why) => {
        if (!h.live() || t.status !== 'RUNNING') return;
        reportLimit(p, why);
        h.fail('probe_limit', `readiness probe ${describeProbe(p, t.plan.name)} cannot run: ${why}`);
      },
      onDeadline: (waitedMs, last) => {
        if (!h.live() || t.status !== 'RUNNING') return;
        const why = last ? ` (last check: ${last.detail})` : '';
        h.fail(
          'readiness_timeout',
          `readiness probe ${describeProbe(p, t.plan.name)} not ready after ${(waitedMs / 1000).toFixed(1)}s${why}`,
        );
      },
    });
    t.loops.push(loop);
  });
  for (const p of t.plan.probes.failure) {
    const loop = driver.start(p, h.ctx(p), {
      onCheck: (r) => h.live() && report(p, r),
      onTrigger: (r) => {
        if (!h.live()) return;
        report(p, r);
        h.fail(
          'failure_probe',
          `failure probe terminated: ${describeProbe(p, t.plan.name)} fired (${r.detail}); the process was still running`,
        );
      },
      onDeadline: () => undefined, // failure probes have no deadline
      // nothing watches for the failure any more: the task fails unless the recipe says `on_error: warn`
      onLimit: (why) => {
        if (!h.live()) return;
        reportLimit(p, why);
        const what = `failure probe ${describeProbe(p, t.plan.name)} cannot run: ${why}`;
        if (p.onError === 'warn')
          h.emit({
            type: 'log',
            level: 'warning',
            message: `${t.plan.name}: ${what}; on_error: warn, the task goes on unwatched`,
          });
        else h.fail('probe_limit', `${what} (on_error: warn lets the task go on unwatched)`);
      },
    });
    t.loops.push(loop);
  }
}

export function stopTaskProbes(t: TaskRt): void {
  for (const l of t.loops) l.stop();
  t.loops = [];
}

/** One more check of every readiness probe that has not passed yet (a service exited). */
export async function finalReadinessCheck(
  t: TaskRt,
  driver: ProbeDriver,
  ctx: (p: PlannedProbe) => ProbeContext,
): Promise<boolean> {
  const checks = await Promise.all(
    t.plan.probes.readiness.map((p, i) =>
      t.readyPassed.has(i)
        ? Promise.resolve(true)
        : driver.checkOnce(p, ctx(p)).then(
            (r) => r.ok,
            () => false,
          ),
    ),
  );
  return checks.every(Boolean);
}
