/**
 * The runtime side of the hardware monitor, kept apart from the run engine: the composition root
 * calls `startMonitoring(plan)` before the run (collectors start per the plan-time schedule),
 * feeds it the run's events (`onEvent`: task events become chart markers, windowed tasks' logs
 * are followed for markers), calls `stop()` when the run is over (also after a failure or
 * Ctrl-C) and `build()` to write the reports. Nothing heavy happens during the run.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { monitorSchedule, type MonitorSchedule } from '../plan/monitor-schedule.js';
import type { BackendType, Plan } from '../plan/types.js';
import { eventTime, type RunEvent } from '../events/events.js';
import { collectorScriptPath, type CollectorLauncher, type RunningCollector } from './launcher.js';
import { MarkerTracker } from './marker-tracker.js';
import { taskEventOf, type TaskEvent } from './markers.js';
import type { BuildResult, CollectorRecord, Rasterizer } from './reports.js';
import { errorMessage } from '../util/errors.js';

export interface MonitorHookOptions {
  /** collector launchers by backend type (the CLI passes the ones that exist) */
  launchers: Partial<Record<BackendType, CollectorLauncher>>;
  warn?: (message: string) => void;
  info?: (message: string) => void;
  rasterize?: Rasterizer | null;
}

export class MonitorRun {
  private readonly events: TaskEvent[] = [];
  private readonly spans = new Map<string, { start: number; end: number }>();
  /** `--resume`: tasks taken over from an earlier session (not run in this one) */
  private readonly reused = new Set<string>();
  private runStart = Date.now();
  private runEnd: number | undefined;
  private readonly records: CollectorRecord[] = [];
  private stopped: Promise<void> | undefined;

  constructor(
    readonly plan: Plan,
    readonly schedule: MonitorSchedule,
    private readonly running: Array<{ c: RunningCollector; host: string; intervalMs: number }>,
    private readonly tracker: MarkerTracker,
    private readonly o: MonitorHookOptions,
  ) {}

  onEvent(e: RunEvent): void {
    const te = taskEventOf(e);
    if (te) this.events.push(te);
    if (e.type === 'task_reused') this.reused.add(e.task);
    if (e.type === 'run_started') this.runStart = e.t;
    else if (e.type === 'run_finished') this.runEnd = e.t;
    else if (e.type === 'task_started') {
      // lifecycle windows run from the engine's start of the first attempt to its end of the last
      const s = this.spans.get(e.task);
      this.spans.set(e.task, { start: s?.start ?? eventTime(e), end: Infinity });
      void this.tracker.attemptStarted(e.task, e.attempt);
    } else if (e.type === 'task_finished') {
      const s = this.spans.get(e.task);
      if (s) s.end = eventTime(e);
      void this.tracker.attemptEnded(e.task, eventTime(e));
    }
  }

  /** Stops every collector and log follower (idempotent). */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      await this.tracker.stop();
      await Promise.all(
        this.running.map(async ({ c, host, intervalMs }) => {
          const stop = Date.now();
          await c.stop();
          this.records.push({
            host,
            name: c.hostName,
            nodeId: c.nodeId,
            start: c.startedAt,
            stop,
            intervalMs,
          });
        }),
      );
    })();
    return this.stopped;
  }

  /** Reports and sflow_monitor.log, once the run is over. */
  async build(): Promise<BuildResult> {
    await this.stop();
    const end = this.runEnd ?? Date.now();
    for (const s of this.spans.values()) if (!Number.isFinite(s.end)) s.end = end;
    const { buildMonitorReports } = await import('./reports.js');
    const r = await buildMonitorReports({
      runDir: this.plan.paths.runDir,
      workflow: this.plan.workflow,
      runId: this.plan.runId,
      schedule: this.schedule,
      collectors: this.records,
      runStart: this.runStart,
      runEnd: end,
      events: this.events,
      taskSpans: this.spans,
      markerLines: (t) => ({ lines: this.tracker.lines(t), searched: this.tracker.searched(t) }),
      rasterize: this.o.rasterize,
      reused: this.reused,
    });
    for (const w of r.warnings) this.o.warn?.(w);
    this.o.info?.(
      `monitor: ${join(this.plan.paths.runDir, 'sflow_monitor.log')} and ${r.reports.length} report folder(s) under sflow_monitor/`,
    );
    return r;
  }
}

/** Starts the planned collectors; undefined when the plan has no monitor. */
export async function startMonitoring(plan: Plan, o: MonitorHookOptions): Promise<MonitorRun | undefined> {
  const schedule = monitorSchedule(plan);
  for (const w of schedule.warnings) o.warn?.(w);
  if (schedule.monitors.length === 0) return undefined;
  const rawDir = join(plan.paths.runDir, 'sflow_monitor', 'raw');
  mkdirSync(rawDir, { recursive: true });
  const running: Array<{ c: RunningCollector; host: string; intervalMs: number }> = [];
  let scriptPath: string | undefined;
  try {
    scriptPath = collectorScriptPath();
  } catch (e) {
    o.warn?.(`monitor: no node is sampled: ${errorMessage(e)}`);
  }
  for (const spec of scriptPath ? schedule.collectors : []) {
    const launcher = o.launchers[spec.backendType];
    if (!launcher) {
      o.warn?.(
        `monitor: node '${spec.node.name}' of backend '${spec.backend}' (${spec.backendType}) is not sampled: collectors cannot be started on this backend yet`,
      );
      continue;
    }
    try {
      const c = await launcher.start({ spec, rawDir, scriptPath: scriptPath! });
      running.push({ c, host: spec.host, intervalMs: spec.tickMs });
    } catch (e) {
      o.warn?.(`monitor: the collector on '${spec.host}' did not start: ${errorMessage(e)}`);
    }
  }
  const windows = plan.tasks.flatMap((t) => {
    const views = schedule.views.filter((v) => v.window && v.windowTask === t.name);
    return views.length ? [{ task: t.name, logPath: t.logPath, window: views[0].window! }] : [];
  });
  return new MonitorRun(plan, schedule, running, new MarkerTracker(windows), o);
}
