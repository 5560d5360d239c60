/**
 * The sinks of a real run, chosen by the CLI (the composition root): events.jsonl, sflow.log,
 * sflow_summary.log and, live, the console; the command logs once the final plan is known.
 */
import type { RunEvent, RunEventSink } from '../events/events.js';
import type { RunDirLayout } from '../outputs/run-dir.js';
import type { Plan } from '../plan/types.js';
import { CommandLogSink } from '../reporters/command-log.js';
import { ConsoleReporter } from '../reporters/console.js';
import { EventsJsonlSink } from '../reporters/events-jsonl.js';
import { SflowLogSink, parseLogLevel } from '../reporters/sflow-log.js';
import { SummaryLogSink } from '../reporters/summary-log.js';
import { runtimeInfo } from '../runtime/runtime-info.js';

export interface SinkOptions {
  logLevel?: string;
  /** live console output */
  console?: boolean;
  /** echo task output lines on the console (default: same as `console`) */
  taskOutput?: boolean;
  /** load warnings the CLI already printed (not printed again) */
  warnings?: string[];
  onEvent?: (e: RunEvent) => void;
  /** a resumed run: the earlier sessions' events, so the summary shows every session */
  prior?: RunEvent[];
  /** console writers (tests) */
  out?: (s: string) => void;
  err?: (s: string) => void;
}

export function runSinks(layout: RunDirLayout, o: SinkOptions): RunEventSink[] {
  const summary = new SummaryLogSink(layout.summaryLog, { runtime: runtimeInfo() });
  for (const e of o.prior ?? []) summary.model.apply(e);
  const sinks: RunEventSink[] = [
    new EventsJsonlSink(layout.eventsJsonl),
    new SflowLogSink(layout.sflowLog, parseLogLevel(o.logLevel)),
    summary,
  ];
  if (o.console) {
    sinks.push(
      new ConsoleReporter({
        taskOutput: o.taskOutput ?? true,
        out: o.out,
        err: o.err,
        shownWarnings: o.warnings,
      }),
    );
  }
  if (o.onEvent) sinks.push({ name: 'onEvent', emit: o.onEvent });
  return sinks;
}

export function planSinks(
  cwd: string,
): (plan: Plan) => { sinks: RunEventSink[]; commandLogs: Array<{ family: string; path: string }> } {
  return (plan) => {
    const cmdLog = new CommandLogSink(plan, cwd);
    return { sinks: [cmdLog], commandLogs: cmdLog.list() };
  };
}
