/**
 * A Slurm step's own times: the step script appends `s <seconds>.<fraction>` when it starts and
 * `e …` when it ends (an EXIT trap) to `<task folder>/.sflow_step_times`, on every node it runs
 * on (operators/srun-step.ts). Attempts of one task follow each other, so an attempt's lines are
 * those written after the file's size at its launch; its start is the earliest `s`, its end the
 * latest `e` (absent when the script replaced the trap: then srun's exit is the end).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { STEP_STAMP_FILE } from '../../operators/srun-step.js';
import { stampMs } from '../../util/stamp-time.js';

export interface StepStamp {
  path: string;
  /** bytes of the file before this attempt (earlier attempts' lines) */
  offset: number;
}

/** the stamp file of a task folder and where this attempt's lines will begin */
export function stepStamp(taskDir: string): StepStamp {
  const path = join(taskDir, STEP_STAMP_FILE);
  let offset = 0;
  try {
    offset = statSync(path).size;
  } catch {
    // not written yet: the attempt's lines start at 0
  }
  return { path, offset };
}

const MAX_READ = 64 * 1024;

export interface StepTimes {
  start?: number;
  end?: number;
}

/** the earliest start and latest end this attempt's processes wrote (each undefined when none) */
export function readStepTimes(s: StepStamp): StepTimes {
  let fd: number | undefined;
  try {
    fd = openSync(s.path, 'r');
    const buf = Buffer.alloc(MAX_READ);
    const n = readSync(fd, buf, 0, MAX_READ, s.offset);
    const lines = buf.subarray(0, n).toString('latin1').split('\n');
    lines.pop(); // what follows the last newline is empty, or a line still being written
    const starts: number[] = [];
    const ends: number[] = [];
    for (const l of lines) {
      const t = stampMs(l.slice(2));
      if (t === undefined) continue;
      if (l.startsWith('s ')) starts.push(t);
      else if (l.startsWith('e ')) ends.push(t);
    }
    return {
      ...(starts.length ? { start: Math.min(...starts) } : {}),
      ...(ends.length ? { end: Math.max(...ends) } : {}),
    };
  } catch {
    return {};
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
