/**
 * The hardware monitor at the composition root: its collectors start once the run session knows
 * the final plan (after allocation, before any task starts: one collector per allocated node), it
 * sees every event of the run (those before the plan are replayed to it), stops when the run is
 * over (also after a failure or Ctrl-C) and writes its reports afterwards.
 */
import { collectorLaunchers } from '../backends/registry.js';
import type { RunEvent, RunEventInput } from '../events/events.js';
import type { MonitorRun } from '../monitor/hook.js';
import type { Plan } from '../plan/types.js';

export class RunMonitor {
  private run: MonitorRun | undefined;
  private early: RunEvent[] | undefined = [];
  /** warnings go into the run's events while it lasts, to stderr after it */
  private toRun: ((e: RunEventInput) => void) | undefined;

  emit(e: RunEvent): void {
    if (this.run) this.run.onEvent(e);
    else this.early?.push(e);
  }

  /** Starts the planned collectors (nothing when the plan has no monitor). */
  async start(plan: Plan, emit: (e: RunEventInput) => void): Promise<void> {
    this.toRun = emit;
    const { startMonitoring } = await import('../monitor/hook.js');
    this.run = await startMonitoring(plan, {
      launchers: collectorLaunchers(),
      warn: (m) => this.warn(m),
      info: (m) => process.stderr.write(`ℹ ${m}\n`),
    });
    for (const e of this.early ?? []) this.run?.onEvent(e);
    this.early = undefined;
  }

  /** Stops every collector and log follower (idempotent). */
  async stop(): Promise<void> {
    this.toRun = undefined;
    this.early = undefined;
    await this.run?.stop();
  }

  /** The reports and sflow_monitor.log, once the run is over. */
  async build(): Promise<void> {
    await this.run?.build();
  }

  private warn(message: string): void {
    if (this.toRun) this.toRun({ type: 'log', level: 'warning', message });
    else process.stderr.write(`⚠ ${message}\n`);
  }
}
