/**
 * What the orchestrator needs from probes: start a loop for one planned probe (delay,
 * interval, threshold, readiness deadline) and report its checks, and run one extra check
 * on demand (the final readiness check when a service exits). The real implementation sits
 * on src/probes (probe-adapter.ts); tests use fakes.
 */
import type { CheckContext } from './kind.js';
import type { PlannedProbe } from './registry.js';
import type { CheckResult } from './types.js';

export { describeProbe } from './registry.js';

export interface ProbeLoopEvents {
  onCheck(r: CheckResult): void;
  /** the threshold was reached (readiness passed / failure fired); the loop has ended */
  onTrigger(r: CheckResult): void;
  /** readiness only: the overall deadline passed without success; the loop has ended */
  onDeadline(waitedMs: number, last: CheckResult | undefined): void;
  /** the probe cannot run any more (its pattern hit the regex time limit); the loop has ended */
  onLimit?(reason: string): void;
}

export interface ProbeLoop {
  stop(): void;
}

export interface ProbeContext extends CheckContext {
  /** ms epoch of the attempt's start; `delay` counts from here */
  startedAt: number;
}

export interface ProbeDriver {
  start(probe: PlannedProbe, ctx: ProbeContext, ev: ProbeLoopEvents): ProbeLoop;
  checkOnce(probe: PlannedProbe, ctx: ProbeContext): Promise<CheckResult>;
}
