/**
 * `workflow.timeout` → seconds. Accepted: an integer (seconds), or text: `90`, `90s`, `30m`, `2h`,
 * `1d`, combinations such as `1h30m`, or a clock `H:MM:SS` / `MM:SS` / `D-HH:MM:SS` (Slurm's
 * time format). 0 means no limit. Anything else is a located plan error.
 */
import type { Scope } from '../config/expr/index.js';
import { planError, renderField, type Where } from '../config/resolve.js';

const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds, or undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  if (/^(\d+(\.\d+)?\s*[smhd]\s*)+$/.test(t)) {
    let total = 0;
    for (const m of t.matchAll(/(\d+(?:\.\d+)?)\s*([smhd])/g)) total += Number(m[1]) * UNIT_S[m[2]];
    return total;
  }
  const clock = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d{1,2})$/.exec(t);
  if (clock) {
    const [, d, h, m, s] = clock;
    if (Number(s) >= 60 || (h !== undefined && Number(m) >= 60)) return undefined;
    return Number(d ?? 0) * 86_400 + Number(h ?? 0) * 3600 + Number(m) * 60 + Number(s);
  }
  return undefined;
}

/** `workflow.timeout` of the recipe → seconds (null: no limit). */
export function workflowTimeout(value: unknown, scope: Scope, where: Where): number | null {
  if (value === undefined || value === null) return null;
  const text = typeof value === 'string' ? renderField(value, scope, where) : String(value);
  const s = parseDuration(text);
  if (s === undefined || !Number.isFinite(s)) {
    throw planError(
      where,
      'plan.timeout',
      `workflow.timeout must be a duration, got '${text}'`,
      "write seconds (3600), units ('90m', '2h', '1h30m', '1d') or a clock ('2:00:00')",
    );
  }
  return s > 0 ? s : null;
}

/** `7200` → `2h`, `5400` → `1h30m`, `45` → `45s` */
export function formatDuration(seconds: number): string {
  let rest = Math.round(seconds);
  const parts: string[] = [];
  for (const [u, n] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (rest >= n) {
      parts.push(`${Math.floor(rest / n)}${u}`);
      rest %= n;
    }
  }
  if (rest || parts.length === 0) parts.push(`${rest}s`);
  return parts.join('');
}
