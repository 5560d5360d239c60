/** How upload events read on the console and in sflow.log (one line each, or none). */
import type { RunEvent } from '../events/events.js';
import { shortDuration } from './format.js';

type UploadEvent = Extract<RunEvent, { type: 'upload' }>;

export function bytesText(n: number | undefined): string {
  if (n === undefined) return '?';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

const who = (e: UploadEvent) => (e.task ? `${e.task}: upload` : 'workflow.upload_all');

export function uploadLine(e: UploadEvent): { level: 'debug' | 'info' | 'warning' | 'error'; text: string } {
  switch (e.phase) {
    case 'start':
      // the run archive is zipped first, which can take a while: say so
      return e.task
        ? { level: 'debug', text: `⇪ ${who(e)} ${e.from} → ${e.dest}` }
        : { level: 'info', text: `⇪ workflow.upload_all: zipping ${e.from} and uploading it to ${e.dest}` };
    case 'progress': {
      const pct = e.bytes ? ` (${Math.floor((100 * (e.sent ?? 0)) / e.bytes)}%)` : '';
      return {
        level: 'info',
        text: `⏳ ${who(e)} ${e.dest}: ${bytesText(e.sent)} of ${bytesText(e.bytes)}${pct}, ${shortDuration(e.durationMs ?? 0)}`,
      };
    }
    case 'retry':
      return {
        level: 'warning',
        text: `↻ ${who(e)} ${e.dest} failed (${e.error ?? 'error'}); retrying in ${e.delayS}s (attempt ${e.attempt})`,
      };
    case 'done':
      return {
        level: 'info',
        text: `⇪ ${who(e)} ${e.from} → ${e.dest} (${bytesText(e.bytes)}, ${shortDuration(e.durationMs ?? 0)}${(e.attempt ?? 1) > 1 ? `, ${e.attempt} attempts` : ''})`,
      };
    case 'failed':
      // the task was cancelled while it uploaded: it is CANCELLED, not COMPLETED
      if (e.cancelled)
        return {
          level: 'warning',
          text: `⊘ ${who(e)} ${e.from} → ${e.dest || e.target} not uploaded: ${e.task} was cancelled`,
        };
      return {
        level: e.onError === 'fail' ? 'error' : 'warning',
        text: `✗ ${who(e)} ${e.from} → ${e.dest || e.target} failed: ${e.error ?? 'error'} (on_error: ${e.onError}${e.onError === 'warn' && e.task ? `; ${e.task} stays COMPLETED` : ''})`,
      };
  }
}
