/**
 * What the orchestrator needs from probes: start a loop for one planned probe (delay,
 * interval, threshold, readiness deadline) and report its checks, and run one extra check
 * on demand (the final readiness check when a service exits). The real implementation sits
 * on src/probes (probe-adapter.ts); tests use fakes.
 */
import type { PlannedProbe, PlannedTask } from '../plan/types.js';
import type { ProbeTransport } from './types.js';

export interface ProbeCheck {
  ok: boolean;
  detail: string;
}

export interface ProbeLoopEvents {
  onCheck(r: ProbeCheck): void;
  /** the threshold was reached (readiness passed / failure fired); the loop has ended */
  onTrigger(r: ProbeCheck): void;
  /** readiness only: the overall deadline passed without success; the loop has ended */
  onDeadline(waitedMs: number, last: ProbeCheck | undefined): void;
  /** the probe cannot run any more (its pattern hit the regex time limit); the loop has ended */
  onLimit?(reason: string): void;
}

export interface ProbeLoop {
  stop(): void;
}

export interface ProbeContext {
  task: PlannedTask;
  /** the log a log_watch probe reads (own task, or the `logger` task) */
  logPath: string;
  /** ms epoch of the attempt's start; `delay` counts from here */
  startedAt: number;
  /** tcp/http checks run through this instead of from the driver (the task's backend decides) */
  transport?: ProbeTransport;
}

export interface ProbeDriver {
  start(probe: PlannedProbe, ctx: ProbeContext, ev: ProbeLoopEvents): ProbeLoop;
  checkOnce(probe: PlannedProbe, ctx: ProbeContext): Promise<ProbeCheck>;
}

/** Short human description: `tcp_port 127.0.0.1:8080`, `http_get http://…`, `log_watch "x"`. */
export function describeProbe(p: PlannedProbe, self?: string): string {
  switch (p.kind) {
    case 'tcp_port': {
      const hosts = p.hosts && p.hosts.length > 0 ? p.hosts : [p.host ?? '127.0.0.1'];
      return `tcp_port ${hosts.map((h) => `${h}:${p.port}`).join(',')}`;
    }
    case 'http_get':
    case 'http_post':
      return `${p.kind} ${p.url}`;
    case 'log_watch':
      return `log_watch ${JSON.stringify(p.pattern ?? '')}${p.logTask && p.logTask !== self ? ` in ${p.logTask}` : ''}${
        (p.matchCount ?? 1) > 1 ? ` x${p.matchCount}` : ''
      }`;
  }
}
