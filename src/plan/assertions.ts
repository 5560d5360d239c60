/**
 * `assert:` at plan time: every entry must be exactly one `${{ }}` expression (its syntax was
 * checked at load), may read `result.<name>` for a name the task's `result:` defines, and any
 * other name the recipe's expressions know (variables, backends, artifacts, workflow). The values
 * of those other names are frozen into the plan as plain data; a replica sees its own sweep
 * values (unlike scripts, where `${{ X }}` keeps the default, as nv-sflow does).
 */
import { formatLocation } from '../util/sflow-error.js';
import { didYouMean } from '../config/errors.js';
import { locate } from '../config/source.js';
import { compileCached } from '../config/templates.js';
import { toNative, type NativeValue, type Scope, type Value } from '../config/expr/index.js';
import { planError, type Where } from '../config/resolve.js';
import type { PlannedAssertion } from './types.js';

import type { Task } from '../config/schema/index.js';

export interface AssertionDraft {
  source: string;
  location: string;
  /** names read besides `result` */
  roots: string[];
}

export function draftAssertions(item: Task, where: Where, scope: Scope): AssertionDraft[] {
  const list = item.assert;
  if (!list || list.length === 0) return [];
  const base = String(item.name);
  const at = (...p: (string | number)[]): Where => ({ doc: where.doc, path: [...where.path, ...p] });
  const result = item.result;
  if (!result)
    throw planError(
      at('assert'),
      'plan.assert_without_result',
      `task '${base}' has 'assert:' but no 'result:' to check`,
      "declare what to parse with 'result:' (patterns or file); assertions read it as result.<name>",
    );
  const names = result.file ? undefined : (result.patterns ?? []).map((p) => p.name);
  return list.map((source, i) => {
    const t = compileCached(source);
    if (!t.isSingleExpression)
      throw planError(
        at('assert', i),
        'plan.assert_form',
        `assert entry of task '${base}' must be exactly one \${{ … }} expression, got '${source}'`,
        'write it as "${{ result.throughput > 0 }}" (quoted, nothing around the braces)',
      );
    const roots = new Set<string>();
    for (const ref of t.references()) {
      const root = String(ref[0]);
      if (root === 'result') {
        const name = ref[1];
        if (names && typeof name === 'string' && !names.includes(name))
          throw planError(
            at('assert', i),
            'plan.assert_unknown_result',
            `assert of task '${base}' reads result.${name}, which 'result:' does not define`,
            didYouMean(name, names) ?? `'result:' defines: ${names.join(', ') || '(nothing)'}`,
          );
        continue;
      }
      if (!(root in scope))
        throw planError(
          at('assert', i),
          'plan.assert_unknown_name',
          `unknown name '${root}' in assert of task '${base}': ${source}`,
          didYouMean(root, ['result', ...Object.keys(scope)]) ??
            'assertions read result.<name> and the recipe variables (variables.<NAME>)',
        );
      roots.add(root);
    }
    return {
      source,
      location: formatLocation(locate(where.doc, [...where.path, 'assert', i])),
      roots: [...roots],
    };
  });
}

const isDict = (v: NativeValue): v is { [k: string]: NativeValue } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The planned assertions of one task instance, with its sweep values bound. */
export function instanceAssertions(
  drafts: AssertionDraft[],
  scope: Scope,
  sweep: Record<string, Value>,
): PlannedAssertion[] | undefined {
  if (drafts.length === 0) return undefined;
  return drafts.map((d) => {
    const bindings: { [name: string]: NativeValue } = {};
    for (const root of d.roots) {
      if (root in sweep) bindings[root] = toNative(sweep[root]);
      else if (root === 'variables') {
        const native = toNative(scope.variables);
        const vars = isDict(native) ? native : {};
        for (const [k, v] of Object.entries(sweep)) vars[k] = toNative(v);
        bindings[root] = vars;
      } else bindings[root] = toNative(scope[root]);
    }
    return { source: d.source, location: d.location, bindings };
  });
}
