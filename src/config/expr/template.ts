/**
 * Templates: strings with `${{ … }}` parts (spec config.md 3.1, 3.6).
 *
 * Jinja2 behaviours kept: one trailing newline of an expression-bearing string is dropped;
 * `\r\n`/`\r` in literal text become `\n`; `${{-` / `-}}` strip whitespace before / after.
 * Deliberate deviation (spec 3.1 Recommendation): `{% … %}` and `{# … #}` are literal text, so
 * shell such as `${#arr[@]}` works next to an expression. There is no escape for `${{`.
 */
import type { Node } from './ast.js';
import { children } from './ast.js';
import { rethrow } from './compile-apply.js';
import { Compiler } from './compile.js';
import { lexRegion } from './lexer.js';
import { Parser } from './parser.js';
import { metered, sized } from './meter.js';
import { renderValue } from './render.js';
import { DomainValue, type Scope, type Value, isDict } from './values.js';

export type RefPath = (string | number)[];

/** One `${{ … }}` part of a template. */
export interface ExpressionPart {
  /** the part as written, delimiters included */
  readonly raw: string;
  /** the expression between the delimiters, trimmed */
  readonly text: string;
  /** offsets of `raw` in the template source */
  readonly start: number;
  readonly end: number;
  /** reference paths of this part (see CompiledTemplate.references) */
  readonly references: readonly RefPath[];
  /** evaluates this part alone to its native value */
  evaluate(scope: Scope): Value;
}

export interface CompiledTemplate {
  readonly source: string;
  /** true when the whole string is exactly one `${{ … }}` (no text around it, not even whitespace) */
  readonly isSingleExpression: boolean;
  /** the expression parts, in source order */
  readonly expressions: readonly ExpressionPart[];
  /**
   * Every reference path rooted at a free name, longest form only, deduplicated, in source order:
   * `task.w[1].gpus` → ['task','w',1,'gpus']; a computed subscript ends the path (`a[b]` → ['a'], ['b']).
   * The callee of `range(…)` is not a reference.
   */
  references(): RefPath[];
}

/** literal text, or an expression part rendered to its text */
type Piece = string | ((scope: Scope) => string);

class Template implements CompiledTemplate {
  private refs?: RefPath[];
  constructor(
    readonly source: string,
    readonly isSingleExpression: boolean,
    readonly expressions: readonly ExpressionPart[],
    /** literal text (already normalised) and compiled expressions, for rendering */
    readonly pieces: readonly Piece[],
  ) {}

  references(): RefPath[] {
    if (!this.refs) {
      const seen = new Set<string>();
      this.refs = [];
      for (const e of this.expressions) {
        for (const r of e.references) {
          const key = JSON.stringify(r);
          if (!seen.has(key)) {
            seen.add(key);
            this.refs.push(r);
          }
        }
      }
    }
    return this.refs.map((r) => r.slice());
  }
}

function chainPath(n: Node): RefPath | null {
  if (n.kind === 'name') return [n.name];
  if (n.kind === 'attr') {
    const p = chainPath(n.obj);
    return p && [...p, n.name];
  }
  if (n.kind === 'item' && n.key.kind === 'const') {
    const k = n.key.value;
    if (typeof k !== 'string' && !(typeof k === 'number' && Number.isInteger(k))) return null;
    const p = chainPath(n.obj);
    return p && [...p, k];
  }
  return null;
}

function collectRefs(n: Node, out: RefPath[]): void {
  const p = chainPath(n);
  if (p) {
    out.push(p);
    return;
  }
  if (n.kind === 'call' && n.callee.kind === 'name') {
    for (const a of [...n.args, ...n.kwargs.map((k) => k.value)]) collectRefs(a, out);
    return;
  }
  for (const c of children(n)) collectRefs(c, out);
}

function hasDomain(v: Value, depth = 0): boolean {
  if (v instanceof DomainValue) return true;
  if (depth > 100 || v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.some((x) => hasDomain(x, depth + 1));
  return isDict(v) && Object.keys(v).some((k) => hasDomain(v[k], depth + 1));
}

/** Replaces DomainValues by their values (copying only containers that hold one). */
function stripDomains(v: Value): Value {
  while (v instanceof DomainValue) v = v.value;
  if (!hasDomain(v)) return v;
  if (Array.isArray(v)) return v.map(stripDomains);
  if (!isDict(v)) return v;
  const out: Record<string, Value> = {};
  for (const k of Object.keys(v)) out[k] = stripDomains(v[k]);
  return out;
}

/** True when the string contains the three characters `${{`. */
export function hasExpression(s: string): boolean {
  return s.includes('${{');
}

const NL = /\r\n?/g;

function build(source: string): Template {
  if (!source.includes('${{')) return new Template(source, false, [], [source]);
  const texts: string[] = [];
  const exprs: ExpressionPart[] = [];
  const evs: ((scope: Scope) => string)[] = [];
  const strips: [boolean, boolean][] = [];
  let pos = 0;
  let open: number;
  while ((open = source.indexOf('${{', pos)) >= 0) {
    texts.push(source.slice(pos, open));
    const region = lexRegion(source, open + 3, open);
    const raw = source.slice(open, region.end);
    const ast = new Parser(source, region.tokens, raw).parseTop();
    const ev = new Compiler(source, raw).compileRoot(ast);
    const refs: RefPath[] = [];
    collectRefs(ast, refs);
    const inner = raw.slice(3 + (region.stripBefore ? 1 : 0), raw.length - (region.stripAfter ? 3 : 2));
    exprs.push({
      raw,
      text: inner.trim(),
      start: open,
      end: region.end,
      references: refs,
      evaluate: (scope) => metered(() => stripDomains(ev(scope))),
    });
    const text = inner.trim();
    evs.push((scope) => {
      const v = ev(scope);
      try {
        return renderValue(v);
      } catch (e) {
        throw rethrow(e, text); // a value too large to render
      }
    });
    strips.push([region.stripBefore, region.stripAfter]);
    pos = region.end;
  }
  texts.push(source.slice(pos));
  // Jinja2: newlines normalised, one trailing newline of the source dropped, then `-` trimming.
  const norm = texts.map((t) => t.replace(NL, '\n'));
  const last = norm.length - 1;
  if (norm[last].endsWith('\n')) norm[last] = norm[last].slice(0, -1);
  strips.forEach(([before, after], i) => {
    if (before) norm[i] = norm[i].trimEnd();
    if (after) norm[i + 1] = norm[i + 1].trimStart();
  });
  const pieces: Piece[] = [];
  norm.forEach((t, i) => {
    if (t) pieces.push(t);
    if (i < evs.length) pieces.push(evs[i]);
  });
  const single = exprs.length === 1 && exprs[0].start === 0 && exprs[0].end === source.length;
  return new Template(source, single, exprs, pieces);
}

const cache = new Map<string, Template>();
const CACHE_MAX = 5000;

/** Parses and compiles a template; throws ExprSyntaxError (unknown filters/tests included). */
export function compileTemplate(source: string): CompiledTemplate {
  let t = cache.get(source);
  if (!t) {
    t = build(source);
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(source, t);
  }
  return t;
}

function piecesOf(t: CompiledTemplate): readonly Piece[] {
  if (!(t instanceof Template)) throw new TypeError('not a compiled template');
  return t.pieces;
}

/** Python str() of each expression, concatenated with the literal text (spec 3.6). */
export function renderTemplate(t: CompiledTemplate, scope: Scope): string {
  const pieces = piecesOf(t);
  if (pieces.length === 1) {
    const p = pieces[0];
    return typeof p === 'string' ? p : metered(() => p(scope));
  }
  return metered(() => {
    let out = '';
    for (const p of pieces) {
      const text = typeof p === 'string' ? p : p(scope);
      if (typeof p !== 'string') {
        try {
          sized(out.length + text.length);
        } catch (e) {
          throw rethrow(e, t.source);
        }
      }
      out += text;
    }
    return out;
  });
}

/**
 * A single-expression template gives its native value (DomainValues unwrapped; the value may
 * share structure with the scope: treat it as read-only); any other template its rendered string.
 */
export function evaluateTemplate(t: CompiledTemplate, scope: Scope): Value {
  if (t.isSingleExpression) return t.expressions[0].evaluate(scope);
  return renderTemplate(t, scope);
}

/**
 * Textual substitution for `compose --resolve`: each `${{ … }}` part for which `resolve` returns a
 * string is replaced by it; parts for which it returns undefined are kept as written. Literal text
 * is kept exactly as in the source (no newline dropping or trimming).
 */
export function substituteTemplate(
  t: CompiledTemplate,
  resolve: (part: ExpressionPart) => string | undefined,
): string {
  let out = '';
  let pos = 0;
  for (const e of t.expressions) {
    out += t.source.slice(pos, e.start);
    out += resolve(e) ?? e.raw;
    pos = e.end;
  }
  return out + t.source.slice(pos);
}
