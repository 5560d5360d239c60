/**
 * Probes (config.md 1.14, 5.9): one check = one question "is the condition met now?".
 * Readiness probes ask "is the service up?", failure probes "is a failure visible?"; both
 * use the same checks and the same scheduler (loop.ts).
 */

export interface CheckResult {
  /** the condition is met (service up / pattern seen often enough) */
  ok: boolean;
  /** what the check saw, one line: `127.0.0.1:8000 open`, `HTTP 503`, `1/2 matches` */
  detail: string;
  /**
   * set when the check can never run again: its pattern hit the regex time limit
   * (util/guarded-regex.ts); the loop ends and reports it
   */
  limit?: string;
}

export interface ProbeCheck {
  /** the probe kind's recipe key (`tcp_port`) */
  readonly kind: string;
  /** short description for messages: `tcp_port 127.0.0.1:8000` */
  describe(): string;
  /**
   * One check. Must settle within about `eachCheckTimeoutMs` and stop work promptly when
   * `signal` aborts. Never rejects: problems are `{ ok: false, detail }`.
   */
  check(signal: AbortSignal, eachCheckTimeoutMs: number): Promise<CheckResult>;
}

export interface ProbeLoopResultEvent extends CheckResult {
  /** 1-based number of this check */
  n: number;
  /** consecutive met checks including this one (0 when not met) */
  consecutive: number;
  /** ms epoch when the check started */
  at: number;
  /** how long the check took */
  tookMs: number;
}

export interface ProbeLoopOptions {
  check: ProbeCheck;
  /** wait before the first check, counted from `startedAt` */
  delayMs: number;
  /** time between the starts of two checks (a check slower than this is followed at once) */
  intervalMs: number;
  /** consecutive met checks needed */
  threshold: number;
  /** overall deadline counted from `startedAt` (readiness `timeout`); none when absent or ≤ 0 */
  deadlineMs?: number;
  /** per-check time limit (`each_check_timeout`, default 30 s) */
  eachCheckTimeoutMs?: number;
  /** ms epoch the delay and deadline count from (the attempt's start); default: now */
  startedAt?: number;
  /** called after every check, before the loop decides; the passing check included */
  onResult?: (r: ProbeLoopResultEvent) => void;
  signal?: AbortSignal;
  /** how the probe is named in the deadline message (default `probe`) */
  label?: string;
}

export type ProbeLoopOutcome =
  | { passed: true; checks: number; elapsedMs: number; last: CheckResult }
  | {
      passed: false;
      /** `readiness probe tcp_port 127.0.0.1:8000 did not pass within 20 s (…)`, or `aborted` */
      reason: string;
      timedOut: boolean;
      aborted: boolean;
      checks: number;
      elapsedMs: number;
      last?: CheckResult;
      /** the check hit a limit it cannot get past (CheckResult.limit) */
      limit?: string;
    };

/**
 * Where tcp/http checks run when not from the driver (a backend whose network the driver cannot
 * reach, e.g. Kubernetes: from a probe pod inside the cluster). Each call is one check, settles
 * within about `timeoutMs` and never rejects.
 */
export interface ProbeTransport {
  /** where the checks run, for messages (`probe pod sf-probe-1a2b`) */
  readonly where: string;
  tcp(host: string, port: number, timeoutMs: number, signal: AbortSignal): Promise<CheckResult>;
  /** one HTTP request: the status and the first MiB of the body, or an error */
  http(
    req: { method: 'GET' | 'POST'; url: string; headers: Record<string, string>; body?: string },
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ status: number; body: string } | { error: string }>;
}
