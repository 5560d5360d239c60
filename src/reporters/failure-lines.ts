/**
 * What the console says when a task fails: one line with the cause (a task that never started
 * says so, without an exit status it never had), then where its log is and, when the task's output
 * was not shown live (no terminal), the log's last lines — so a CI log shows why without opening
 * files.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { stripAnsi } from '../util/ansi.js';

export const TAIL_LINES = 10;
const TAIL_BYTES = 16 * 1024;
const LINE_CHARS = 300;

/** The last `n` lines of a file (read from its end only; '' when unreadable). */
export function logTail(path: string, n = TAIL_LINES): string[] {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const len = Math.min(size, TAIL_BYTES);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    const lines = buf.toString('utf8').split('\n');
    if (len < size) lines.shift(); // partial first line
    while (lines.length && lines[lines.length - 1].trim() === '') lines.pop();
    return lines.slice(-n).map((l) => {
      // task output is shown as text (escape sequences removed, as the live echo does)
      const shown = stripAnsi(l.slice(l.lastIndexOf('\r') + 1));
      return shown.length > LINE_CHARS ? `${shown.slice(0, LINE_CHARS)}…` : shown;
    });
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export interface FailedTask {
  task: string;
  started: boolean;
  exitCode: number | null;
  signal?: string | null;
  reason?: string;
  logPath?: string;
  /** the task's output was echoed live: no tail needed */
  echoed: boolean;
}

export function failureLines(f: FailedTask): string {
  const reason = f.reason ?? '';
  if (!f.started) return `✗ ${f.task} never started: ${reason.replace(/^could not start: /, '')}\n`;
  const code = f.exitCode !== null ? `exit ${f.exitCode}` : f.signal ? `signal ${f.signal}` : 'still running';
  // the reason repeats the exit status the line already gives
  const why = reason.replace(/ \((exit|exit code)=[^)]*\)$/, '');
  let out = `✗ ${f.task} failed (${code})${why ? `: ${why}` : ''}\n`;
  if (!f.logPath) return out;
  out += `  log: ${f.logPath}\n`;
  if (!f.echoed) {
    const tail = logTail(f.logPath);
    if (tail.length) out += `  last ${tail.length} line(s):\n${tail.map((l) => `  │ ${l}\n`).join('')}`;
  }
  return out;
}
