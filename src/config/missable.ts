/**
 * `--missable-tasks` (spec config.md §4.6): references to tasks that are absent from the merged
 * workflow are removed when their name matches one of the patterns, and reported.
 * `required_by` (§4.7) is folded into its targets' `depends_on`. An absent target is an error
 * (schema/workflow.ts), as in `depends_on`, unless a pattern matches it: then it is removed and
 * reported like the others.
 */
import { isPlainObject } from './collections.js';

type Obj = Record<string, unknown>;

export function globToRegExp(pattern: string): RegExp {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      // like Python's fnmatch: `[!…]` negates, a `]` right after `[` or `[!` is a literal
      let j = i + 1;
      if (pattern[j] === '!') j++;
      if (pattern[j] === ']') j++;
      const end = pattern.indexOf(']', j);
      if (end < 0) re += '\\[';
      else {
        let body = pattern.slice(i + 1, end);
        const negate = body.startsWith('!');
        if (negate) body = body.slice(1);
        re += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(re + '$');
}

function tasksOf(doc: Obj): Obj[] {
  const wf = doc.workflow;
  return isPlainObject(wf) && Array.isArray(wf.tasks) ? wf.tasks.filter(isPlainObject) : [];
}

function probesOf(task: Obj): { kind: string; probe: Obj }[] {
  const out: { kind: string; probe: Obj }[] = [];
  if (!isPlainObject(task.probes)) return out;
  for (const kind of ['readiness', 'failure']) {
    const p = task.probes[kind];
    for (const one of Array.isArray(p) ? p : [p]) if (isPlainObject(one)) out.push({ kind, probe: one });
  }
  return out;
}

export interface MissableResult {
  removed: string[];
  /** patterns that matched no absent reference (reported as a warning: a pattern may cover a variant not used in this composition) */
  unused: string[];
}

export function stripMissableTasks(doc: Obj, patterns: string[]): MissableResult {
  const res = patterns.map(globToRegExp);
  const present = new Set(tasksOf(doc).map((t) => String(t.name)));
  const used = new Set<number>();
  const matches = (name: unknown): boolean => {
    if (typeof name !== 'string' || present.has(name)) return false;
    let hit = false;
    res.forEach((r, i) => {
      if (r.test(name)) {
        used.add(i);
        hit = true;
      }
    });
    return hit;
  };
  const removed: string[] = [];
  for (const task of tasksOf(doc)) {
    if (Array.isArray(task.depends_on)) {
      const keep = task.depends_on.filter((d) => {
        if (!matches(d)) return true;
        removed.push(`${String(task.name)}.depends_on: ${String(d)}`);
        return false;
      });
      if (keep.length) task.depends_on = keep;
      else delete task.depends_on;
    }
    for (const { kind, probe } of probesOf(task)) {
      const lw = probe.log_watch;
      if (isPlainObject(lw) && matches(lw.logger)) {
        removed.push(`${String(task.name)}.probes.${kind}.log_watch.logger: ${String(lw.logger)}`);
        delete lw.logger;
      }
    }
  }
  for (const task of tasksOf(doc)) {
    if (!Array.isArray(task.required_by)) continue;
    const keep = task.required_by.filter((r) => {
      if (!matches(r)) return true;
      removed.push(`${String(task.name)}.required_by: ${String(r)}`);
      return false;
    });
    if (keep.length) task.required_by = keep;
    else delete task.required_by;
  }
  for (const name of present) res.forEach((re, i) => re.test(name) && used.add(i));
  return { removed, unused: patterns.filter((_, i) => !used.has(i)) };
}

/** Fold `A.required_by: [B]` into `B.depends_on: [A]` (an absent target is left for validation to report). */
export function foldRequiredBy(doc: Obj): void {
  const tasks = tasksOf(doc);
  const byName = new Map(tasks.map((t) => [String(t.name), t]));
  for (const t of tasks) {
    if (!Array.isArray(t.required_by)) continue;
    for (const target of t.required_by) {
      const tt = typeof target === 'string' ? byName.get(target) : undefined;
      if (!tt) continue;
      const deps: unknown[] = Array.isArray(tt.depends_on) ? (tt.depends_on as unknown[]) : [];
      if (!deps.includes(t.name)) tt.depends_on = [...deps, t.name];
    }
  }
}
