/**
 * `sflow.log` (runtime.md 8.5): the driver's own log — orchestration, retries, failures,
 * fail-fast, probe triggers, teardown — and never task output. Lines are
 * `<YYYY-MM-DD HH:MM:SS,mmm> - sflow - LEVEL - message`, written synchronously.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { RunEvent, RunEventSink } from '../events/events.js';
import { logTimestamp, seconds, timedelta } from './format.js';
import { uploadLine } from './upload-lines.js';

export type LogLevel = 'debug' | 'info' | 'warning' | 'error' | 'critical';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warning: 30, error: 40, critical: 50 };

export function parseLogLevel(s: string | undefined): LogLevel {
  const l = (s ?? 'info').toLowerCase();
  return l in RANK ? (l as LogLevel) : 'info';
}

/** The sflow.log line(s) an event produces: [level, message]. */
export function logLinesFor(e: RunEvent, started: number | undefined): Array<[LogLevel, string]> {
  switch (e.type) {
    case 'run_started':
      return [
        e.resume
          ? [
              'info',
              `Resuming workflow '${e.workflow}' (run id ${e.runId}, session ${e.session ?? 2}${e.resume.forced ? ', --force' : ''}): ${e.resume.reused} task(s) reused, ${e.resume.rerun.length} to run`,
            ]
          : ['info', `Starting workflow '${e.workflow}' (run id ${e.runId}, ${e.tasks.length} task(s))`],
        ['info', `Output folder: ${e.runDir}`],
      ];
    case 'task_reused':
      return [['debug', `Task '${e.task}' reused: ${e.status} in an earlier session (attempt ${e.attempt})`]];
    case 'task_submitted':
      return [['info', `Submitting task: ${e.task}${e.attempt > 1 ? ` (attempt ${e.attempt})` : ''}`]];
    case 'task_started':
      return [['debug', `Task '${e.task}' started (attempt ${e.attempt}${e.pid ? `, pid ${e.pid}` : ''})`]];
    case 'task_ready':
      return [['info', `Task '${e.task}' is READY (${e.probe})`]];
    case 'task_finished':
      if (e.status === 'COMPLETED') return [['info', `Task '${e.task}' completed (exit=0)`]];
      if (e.status === 'FAILED') {
        const code =
          e.exitCode !== null && e.exitCode !== undefined
            ? `exit=${e.exitCode}`
            : e.signal
              ? `signal=${e.signal}`
              : 'process still running';
        return [
          ['error', `Task '${e.task}' failed (${code}, attempt ${e.attempt}): ${e.reason ?? ''}`.trimEnd()],
        ];
      }
      return [['warning', `Task '${e.task}' cancelled${e.reason ? `: ${e.reason}` : ''}`]];
    case 'task_retry':
      return [
        [
          'warning',
          `Task '${e.task}' ${e.reason ? e.reason : `failed with exit code ${e.exitCode ?? 'n/a'}`}; retrying in ${e.delayS}s (attempt ${e.nextAttempt}/${e.total})`,
        ],
      ];
    case 'probe_result':
      if (e.limit)
        return [
          ['warning', `Probe ${e.role}/${e.kind} of '${e.task}' stopped (regex time limit): ${e.limit}`],
        ];
      return [['debug', `Probe ${e.role}/${e.kind} of '${e.task}': ${e.ok ? 'ok' : 'not ok'} - ${e.detail}`]];
    case 'result_parsed':
      return e.ok
        ? [['info', `Task '${e.task}': result parsed (${Object.keys(e.values).length} value(s))`]]
        : [['warning', `Task '${e.task}': result incomplete: ${e.errors.join('; ')}`]];
    case 'external_call':
      return [
        [
          e.ok ? 'debug' : 'warning',
          `${e.tool} ${e.args.join(' ')} -> ${e.timedOut ? 'timed out' : `exit ${e.exitCode}`} in ${e.durationMs} ms`,
        ],
      ];
    case 'log':
      return [[e.level, e.message]];
    case 'fail_fast':
      return [['error', e.message]];
    case 'signal':
      return e.count === 1
        ? [['warning', `Received ${e.signal}; requesting shutdown…`]]
        : [['warning', `Received ${e.signal} again; killing every task process now`]];
    case 'task_stopped':
      return [
        [
          'info',
          `Stopped task '${e.task}' (${e.why}: ${e.signals.join(' → ') || 'already exiting'}) in ${seconds(e.elapsedMs)}`,
        ],
      ];
    case 'teardown':
      return e.phase === 'start'
        ? [['debug', `Teardown: stopping ${e.groups} process group(s)`]]
        : [['debug', `Teardown finished in ${seconds(e.elapsedMs ?? 0)}`]];
    case 'upload': {
      const l = uploadLine(e);
      return [[l.level, l.text]];
    }
    case 'run_finished': {
      const out: Array<[LogLevel, string]> = [];
      if (started !== undefined)
        out.push(['info', `Workflow execution finished in ${timedelta(e.t - started)}`]);
      out.push([e.status === 'COMPLETED' ? 'info' : 'error', e.message]);
      return out;
    }
    default:
      return [];
  }
}

export class SflowLogSink implements RunEventSink {
  readonly name = 'sflow.log';
  private fd: number | undefined;
  private started: number | undefined;
  private readonly min: number;

  constructor(
    readonly path: string,
    level: LogLevel = 'info',
  ) {
    this.fd = openSync(path, 'a');
    this.min = RANK[level];
  }

  emit(e: RunEvent): void {
    if (this.fd === undefined) return;
    if (e.type === 'run_started') this.started = e.t;
    const lines = logLinesFor(e, this.started);
    if (lines.length === 0) return;
    let text = '';
    const ts = logTimestamp(e.t);
    for (const [level, msg] of lines) {
      if (RANK[level] >= this.min) text += `${ts} - sflow - ${level.toUpperCase()} - ${msg}\n`;
    }
    if (text) writeSync(this.fd, text);
  }

  async close(): Promise<void> {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
