/**
 * `<family>_cmds.log` (runtime.md 8.3, v0.3): the exact launch command of every attempt,
 * grouped by operator family (bash_cmds.log, slurm_cmds.log, docker_cmds.log, …).
 * Environment values are not written (they may hold secrets); only the argv.
 */
import { appendFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { operatorOf } from '../operators/index.js';
import type { Plan, PlannedTask } from '../plan/types.js';
import type { RunEvent, RunEventSink } from '../events/events.js';
import { logTimestamp } from './format.js';

/** the family an operator's launch commands are logged under (its registry entry says; else `backend`) */
export function commandFamily(operatorType: string): string {
  return operatorOf(operatorType)?.commandLog ?? 'backend';
}

/** POSIX shell quoting of one word. */
export function shellQuote(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

export class CommandLogSink implements RunEventSink {
  /** named by its files, like the other record sinks: a failed write lists them in the verdict */
  name = 'command logs';
  private readonly tasks = new Map<string, PlannedTask>();
  readonly files = new Map<string, string>();

  constructor(
    plan: Plan,
    private readonly cwd: string,
  ) {
    for (const t of plan.tasks) {
      this.tasks.set(t.name, t);
      const fam = commandFamily(t.operator.type);
      if (!this.files.has(fam)) this.files.set(fam, resolve(plan.paths.runDir, `${fam}_cmds.log`));
    }
    if (this.files.size > 0) this.name = [...this.files.values()].join(', ');
  }

  /** family → path, for the summary's Command Logs section */
  list(): Array<{ family: string; path: string }> {
    return [...this.files].map(([family, path]) => ({ family, path }));
  }

  emit(e: RunEvent): void {
    if (e.type !== 'task_started') return;
    const t = this.tasks.get(e.task);
    if (!t) return;
    const path = this.files.get(commandFamily(t.operator.type)) as string;
    const head = `# ${logTimestamp(e.t)} task=${t.name} attempt=${e.attempt}${e.pid ? ` pid=${e.pid}` : ''} cwd=${this.cwd}`;
    appendFileSync(path, `${head}\n${t.argv.map(shellQuote).join(' ')}\n\n`);
  }
}
