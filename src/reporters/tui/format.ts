/** Plain-text pieces of the live view (pure, so they are easy to test and cheap to render). */
import type { PlanBackendInfo } from '../../events/events.js';
import type { TaskRow, TaskState, TuiModel } from './model.js';

export const STATE_MARK: Record<TaskState, string> = {
  PENDING: '·',
  SUBMITTED: '…',
  RUNNING: '▶',
  READY: '●',
  COMPLETED: '✓',
  FAILED: '✗',
  CANCELLED: '⊘',
};

export const STATE_COLOR: Record<TaskState, string | undefined> = {
  PENDING: 'gray',
  SUBMITTED: 'cyan',
  RUNNING: 'cyan',
  READY: 'green',
  COMPLETED: 'green',
  FAILED: 'red',
  CANCELLED: 'yellow',
};

const pad2 = (n: number) => String(n).padStart(2, '0');

/** `0:07`, `12:05`, `1:02:03` */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}:${pad2(m)}:${pad2(s % 60)}` : `${m}:${pad2(s % 60)}`;
}

export function wallClock(ms: number): string {
  const d = new Date(ms);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

/** `node0 [0,1]`, `node0+3 [0-7]`, `—` */
export function placement(t: TaskRow): string {
  const nodes =
    t.nodes.length === 0 ? '' : t.nodes.length === 1 ? t.nodes[0] : `${t.nodes[0]}+${t.nodes.length - 1}`;
  const g = t.gpus;
  let gpus = '';
  if (g && g.length) {
    const contiguous = g.every((x, i) => i === 0 || x === g[i - 1] + 1);
    gpus = contiguous && g.length > 2 ? `[${g[0]}-${g.at(-1)}]` : `[${g.join(',')}]`;
  }
  return [nodes, gpus].filter(Boolean).join(' ') || '—';
}

export const TABLE_HEADER = `   ${'STATE'.padEnd(10)}${'TRY'.padEnd(5)}${'TIME'.padEnd(8)}TASK`;

/** One row of the task table; the task name last, so a narrow pane cuts the placement, not it. */
export function taskLine(t: TaskRow, now: number, nameWidth: number, selected = false): string {
  const time = t.startedAt ? duration((t.endedAt ?? now) - t.startedAt) : '';
  const tries = t.attempts > 1 ? `${t.attempt}/${t.attempts}` : t.attempt ? String(t.attempt) : '';
  const name =
    t.name.length > nameWidth ? `${t.name.slice(0, Math.max(1, nameWidth - 1))}…` : t.name.padEnd(nameWidth);
  return `${selected ? '›' : ' '}${STATE_MARK[t.state]} ${t.state.padEnd(10)}${tries.padEnd(5)}${time.padEnd(8)}${name}  ${placement(t)}`;
}

export function countsLine(m: TuiModel): string {
  const c = m.counts();
  const parts = [
    `${m.tasks.length} task(s)`,
    c.RUNNING + c.SUBMITTED ? `${c.RUNNING + c.SUBMITTED} running` : '',
    c.READY ? `${c.READY} ready` : '',
    c.COMPLETED ? `${c.COMPLETED} completed` : '',
    c.FAILED ? `${c.FAILED} failed` : '',
    c.CANCELLED ? `${c.CANCELLED} cancelled` : '',
    c.PENDING ? `${c.PENDING} pending` : '',
  ];
  return parts.filter(Boolean).join(' · ');
}

/** `cluster (slurm): 2 nodes, 16 GPUs — node0 node1` */
export function backendLine(b: PlanBackendInfo): string {
  const gpus = b.nodes.reduce((n, x) => n + (x.numGpus ?? 0), 0);
  const names = b.nodes
    .slice(0, 4)
    .map((n) => n.name)
    .join(' ');
  const more = b.nodes.length > 4 ? ` +${b.nodes.length - 4}` : '';
  return `${b.name} (${b.type}): ${b.nodes.length} node(s)${gpus ? `, ${gpus} GPU(s)` : ''} — ${names}${more}`;
}

/** First row to show so that `selected` stays visible in a window of `height` rows. */
export function windowStart(selected: number, total: number, height: number): number {
  if (total <= height) return 0;
  return Math.min(Math.max(0, selected - Math.floor(height / 2)), total - height);
}

/** The task the view follows until the user picks one: the newest running, else the last to end. */
export function autoSelect(tasks: TaskRow[]): number {
  let best = -1;
  let bestAt = -1;
  for (let i = 0; i < tasks.length; i++) {
    const t = tasks[i];
    const live = t.state === 'RUNNING' || t.state === 'READY' || t.state === 'SUBMITTED';
    const at = (live ? 2e15 : 0) + (t.startedAt ?? 0);
    if (t.startedAt !== undefined && at > bestAt) {
      best = i;
      bestAt = at;
    }
  }
  return best < 0 ? 0 : best;
}
