/**
 * Regular expressions from recipes (log_watch and http body patterns, result patterns) run here,
 * under a deadline, so that a pattern with catastrophic backtracking (`re:^(a+)+$` on a line of
 * `a`s) cannot hang the driver: probe deadlines, Ctrl-C and the rest of the run keep working.
 *
 * How: the matching loops live in a `node:vm` context and each call runs with vm's `timeout`,
 * whose watchdog interrupts V8 — also inside the regex engine — after the deadline. One call
 * handles a whole block of lines (the watchdog costs ~0.1 ms per call), and a pattern that ran
 * out of time is reported by the caller and never run again. Pure JavaScript (no native addon,
 * no worker thread), so it works the same inside a single-executable build.
 */
import { errorCode } from './errors.js';
import vm from 'node:vm';

/** longest one guarded call may run */
export const REGEX_DEADLINE_MS = 1_000;

export class RegexTimeoutError extends Error {
  constructor(readonly source: string) {
    super(
      `regular expression /${source.length > 80 ? source.slice(0, 80) + '…' : source}/ took longer than ` +
        `${REGEX_DEADLINE_MS} ms on one block of text and was stopped (catastrophic backtracking?); ` +
        'it is not run again',
    );
    this.name = 'RegexTimeoutError';
  }
}

/** The loops, in the context's own realm; `re` objects and strings come from the caller. */
const HELPERS = `
'use strict';
/** findall-style count of re (with the g flag) in one line */
function countIn(re, line) {
  re.lastIndex = 0;
  if (!re.test(line)) return 0;
  re.lastIndex = 0;
  let k = 0;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    k++;
    if (m[0].length === 0) re.lastIndex++;
  }
  return k;
}
/**
 * Matches of re in each line of text (lines end at \\r\\n, \\r or \\n; the part after the last
 * break counts as a line only when lastIsLine). any: a cheap negative test over the whole text.
 * Returns [count, start, end] with the range of the last line that matched (start -1: none).
 */
function countLines(any, re, text, lastIsLine) {
  if (any) {
    any.lastIndex = 0;
    if (!any.test(text)) return [0, -1, -1];
  }
  const breaks = /\\r\\n|\\r|\\n/g;
  let count = 0, start = -1, end = -1, pos = 0;
  for (let m = breaks.exec(text); m; m = breaks.exec(text)) {
    const k = countIn(re, text.slice(pos, m.index));
    if (k > 0) { count += k; start = pos; end = m.index; }
    pos = m.index + m[0].length;
  }
  if (lastIsLine && pos <= text.length) {
    const k = countIn(re, text.slice(pos));
    if (k > 0) { count += k; start = pos; end = text.length; }
  }
  return [count, start, end];
}
/** the first match of re (without the g flag) in each line: [index, match, index, match, …] */
function execLines(re, lines) {
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    re.lastIndex = 0;
    const m = re.exec(lines[i]);
    if (m) out.push(i, m);
  }
  return out;
}
function testText(re, text) {
  re.lastIndex = 0;
  return re.test(text);
}
`;

type Fn = 'countLines' | 'execLines' | 'testText';

let context: vm.Context | undefined;
const calls = new Map<Fn, vm.Script>();

function call<T>(fn: Fn, re: RegExp, args: unknown[]): T {
  if (!context) {
    context = vm.createContext(Object.create(null) as object);
    vm.runInContext(HELPERS, context);
  }
  let script = calls.get(fn);
  if (!script) {
    script = new vm.Script(`${fn}(...__args)`);
    calls.set(fn, script);
  }
  const ctx = context as { __args?: unknown[] };
  ctx.__args = args;
  try {
    return script.runInContext(context, { timeout: REGEX_DEADLINE_MS }) as T;
  } catch (e) {
    if (errorCode(e) === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new RegexTimeoutError(re.source);
    throw e;
  } finally {
    ctx.__args = undefined;
  }
}

/**
 * Findall-style matches of `re` (which has the g flag) in each line of `text`; `any` (the same
 * pattern with the m flag, no g) is a quick negative test over all of it. See HELPERS.countLines.
 */
export function countLineMatches(
  any: RegExp | undefined,
  re: RegExp,
  text: string,
  lastIsLine: boolean,
): { count: number; lastLine: string | undefined } {
  const [count, start, end] = call<[number, number, number]>('countLines', re, [any, re, text, lastIsLine]);
  return { count, lastLine: start < 0 ? undefined : text.slice(start, end) };
}

/** The first match of `re` in each of `lines`, as [line index, match] pairs. */
export function execEachLine(re: RegExp, lines: string[]): [number, RegExpExecArray][] {
  const flat = call<unknown[]>('execLines', re, [re, lines]);
  const out: [number, RegExpExecArray][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i] as number, flat[i + 1] as RegExpExecArray]);
  return out;
}

/** `re.test(text)` from the start. */
export function testGuarded(re: RegExp, text: string): boolean {
  return call<boolean>('testText', re, [re, text]);
}
