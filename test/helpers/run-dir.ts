/** Reading a finished run directory the way a user (or a script) would. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function onlyRunDir(outputRoot: string): string {
  const dirs = readdirSync(outputRoot).filter((d) => !d.startsWith('_'));
  if (dirs.length !== 1) throw new Error(`expected one run dir in ${outputRoot}, found ${dirs.join(', ')}`);
  return join(outputRoot, dirs[0]);
}

/** task → {status, attempts, exit} from the Tasks table of sflow_summary.log */
export function taskTable(
  runDir: string,
): Record<string, { status: string; attempts: number; exit: string }> {
  const text = readFileSync(join(runDir, 'sflow_summary.log'), 'utf8');
  const start = text.indexOf('\nTasks\n');
  const all = text.slice(start).split('\n');
  const header = all.findIndex((l) => l.startsWith('TASK '));
  const lines = all.slice(header + 1);
  const out: Record<string, { status: string; attempts: number; exit: string }> = {};
  for (const l of lines) {
    if (!l.trim()) break;
    const [name, status, attempts, , exit] = l.trim().split(/\s+/);
    out[name] = { status, attempts: Number(attempts), exit: exit ?? '' };
  }
  return out;
}

export function taskLog(runDir: string, task: string): string {
  const p = join(runDir, task, `${task}.log`);
  return existsSync(p) ? readFileSync(p, 'utf8') : '';
}

export function readJson(path: string): any {
  return JSON.parse(readFileSync(path, 'utf8'));
}
