/**
 * Turns a syntax tree into a closure `(scope) => Value`, once per template, so rendering the same
 * template for many replicas costs no re-parsing. Filter/test names and call targets are checked
 * here, at compile time, so they surface as syntax errors (spec config.md 3.7, V4).
 *
 * Undefined handling follows Jinja2's StrictUndefined: a failed lookup throws, except where the
 * operand is probed (`is defined`, the type tests, `| default`), where it becomes `Missing`.
 */
import type { Node } from './ast.js';
import {
  type CompileCtx,
  type Ev,
  type Mode,
  RENDER,
  STRICT,
  buildCall,
  buildFilter,
  buildTest,
  rethrow,
} from './compile-apply.js';
import { ExprEvalError, ExprSyntaxError } from './errors.js';
import { NOT_FOUND, getAttr, getItem, getSlice, lookupName } from './lookup.js';
import { sized } from './meter.js';
import * as ops from './ops.js';
import { renderValue } from './render.js';
import { type Scope, type Value, Missing, makeTuple, typeName, unwrap } from './values.js';

export type { Ev } from './compile-apply.js';

const ARITH: Record<string, (a: Value, b: Value) => Value> = {
  '+': ops.add,
  '-': ops.sub,
  '*': ops.mul,
  '/': ops.truediv,
  '//': ops.floordiv,
  '%': ops.mod,
  '**': ops.pow,
};

const CMP: Record<string, (a: Value, b: Value) => boolean> = {
  '==': ops.eq,
  '!=': (a, b) => !ops.eq(a, b),
  '<': ops.lt,
  '<=': ops.le,
  '>': ops.gt,
  '>=': ops.ge,
  in: (a, b) => ops.contains(b, a),
  'not in': (a, b) => !ops.contains(b, a),
};

type Of<K extends Node['kind']> = Extract<Node, { kind: K }>;

export class Compiler implements CompileCtx {
  constructor(
    private readonly src: string,
    private readonly part: string,
  ) {}

  compileRoot(n: Node): Ev {
    return this.build(n, RENDER);
  }

  text(n: Node): string {
    return this.src.slice(n.start, n.end);
  }
  fail(msg: string, at: number): never {
    throw new ExprSyntaxError(msg, at, this.part);
  }
  strict(n: Node): Ev {
    return this.build(n, STRICT);
  }

  /** Returns a closure that yields Missing only in probe mode. */
  build<R extends Missing>(n: Node, mode: Mode<R>): (s: Scope) => Value | R {
    const text = this.text(n);
    switch (n.kind) {
      case 'const': {
        const v = n.value;
        return () => v;
      }
      case 'name':
        return this.buildName(n, mode, text);
      case 'attr':
        return this.buildAttr(n, mode, text);
      case 'item':
        return this.buildItem(n, mode, text);
      case 'slice':
        return this.buildSlice(n, mode, text);
      case 'call':
        return buildCall(this, n, text);
      case 'filter':
        return buildFilter(this, n, mode, text);
      case 'test':
        return buildTest(this, n, text);
      case 'unary':
        return this.buildUnary(n, text);
      case 'binary':
        return n.op === '~' ? this.buildConcat(n, text) : this.buildBinary(n, n.op, text);
      case 'compare':
        return this.buildCompare(n, text);
      case 'cond':
        return this.buildCond(n, mode, text);
      case 'list': {
        const items = n.items.map((x) => this.strict(x));
        return (s) => items.map((f) => f(s));
      }
      case 'tuple': {
        const items = n.items.map((x) => this.strict(x));
        return (s) => makeTuple(items.map((f) => f(s)));
      }
      case 'dict':
        return this.buildDict(n, text);
    }
  }

  /** A variable name; a name not in scope is undefined. */
  private buildName<R extends Missing>(n: Of<'name'>, mode: Mode<R>, text: string): (s: Scope) => Value | R {
    const name = n.name;
    return (s) => {
      const v = lookupName(s, name);
      return v === NOT_FOUND ? mode.miss(new Missing(text, name), text) : v;
    };
  }

  /** `obj.name`; an absent attribute is undefined. */
  private buildAttr<R extends Missing>(n: Of<'attr'>, mode: Mode<R>, text: string): (s: Scope) => Value | R {
    const obj = this.strict(n.obj);
    const name = n.name;
    return (s) => {
      const v = getAttr(obj(s), name);
      return v === NOT_FOUND ? mode.miss(new Missing(text, name), text) : v;
    };
  }

  /** `obj[key]`; an absent key is undefined. */
  private buildItem<R extends Missing>(n: Of<'item'>, mode: Mode<R>, text: string): (s: Scope) => Value | R {
    const obj = this.strict(n.obj);
    const key = this.strict(n.key);
    return (s) => {
      const o = obj(s);
      const k = key(s);
      const v = getItem(o, k);
      return v === NOT_FOUND ? mode.miss(new Missing(text, renderValue(k)), text) : v;
    };
  }

  /** `obj[lo:hi:step]`. */
  private buildSlice<R extends Missing>(
    n: Of<'slice'>,
    mode: Mode<R>,
    text: string,
  ): (s: Scope) => Value | R {
    const obj = this.strict(n.obj);
    const [lo, hi, step] = [n.lo, n.hi, n.step].map((x) => (x ? this.strict(x) : undefined));
    return (s) => {
      let v: ReturnType<typeof getSlice>;
      try {
        v = getSlice(obj(s), lo?.(s), hi?.(s), step?.(s));
      } catch (e) {
        throw rethrow(e, text);
      }
      return v === NOT_FOUND ? mode.miss(new Missing(text, ''), text) : v;
    };
  }

  /** `not x`, `-x`, `+x`. */
  private buildUnary(n: Of<'unary'>, text: string): Ev {
    const x = this.strict(n.x);
    if (n.op === 'not') return (s) => !ops.truthy(x(s));
    const f = n.op === '-' ? ops.neg : ops.pos;
    return (s) => {
      const v = x(s);
      try {
        return f(v);
      } catch (e) {
        throw rethrow(e, text);
      }
    };
  }

  /** `a ~ b`: both sides rendered as strings and joined. */
  private buildConcat(n: Of<'binary'>, text: string): Ev {
    const l = this.build(n.l, RENDER);
    const r = this.build(n.r, RENDER);
    return (s) => {
      const a = renderValue(l(s));
      const b = renderValue(r(s));
      try {
        sized(a.length + b.length);
      } catch (e) {
        throw rethrow(e, text);
      }
      return a + b;
    };
  }

  /** `and`, `or` (short-circuit, yielding an operand) and the arithmetic operators. */
  private buildBinary(n: Of<'binary'>, op: Exclude<Of<'binary'>['op'], '~'>, text: string): Ev {
    const l = this.strict(n.l);
    const r = this.strict(n.r);
    if (op === 'and')
      return (s) => {
        const a = l(s);
        return ops.truthy(a) ? r(s) : a;
      };
    if (op === 'or')
      return (s) => {
        const a = l(s);
        return ops.truthy(a) ? a : r(s);
      };
    const f = ARITH[op];
    return (s) => {
      const a = l(s);
      const b = r(s);
      try {
        return f(a, b);
      } catch (e) {
        throw rethrow(e, text);
      }
    };
  }

  /** A comparison chain `a < b <= c`: each link compared, false at the first failing one. */
  private buildCompare(n: Of<'compare'>, text: string): Ev {
    const first = this.strict(n.first);
    const rest = n.rest.map((x) => this.strict(x));
    const fs = n.ops.map((o) => CMP[o]);
    return (s) => {
      let a = first(s);
      for (let i = 0; i < rest.length; i++) {
        const b = rest[i](s);
        let ok: boolean;
        try {
          ok = fs[i](a, b);
        } catch (e) {
          throw rethrow(e, text);
        }
        if (!ok) return false;
        a = b;
      }
      return true;
    };
  }

  /** `x if c else y`; without else, a false condition is undefined ('' when rendered). */
  private buildCond<R extends Missing>(n: Of<'cond'>, mode: Mode<R>, text: string): (s: Scope) => Value | R {
    const test = this.strict(n.test);
    const then = this.build(n.then, mode);
    const other = n.other ? this.build(n.other, mode) : undefined;
    if (other) return (s) => (ops.truthy(test(s)) ? then(s) : other(s));
    const none = new Missing(
      text,
      '',
      'the inline if-expression evaluated to false and no else section was defined',
    );
    return (s) => (ops.truthy(test(s)) ? then(s) : mode.name === 'render' ? '' : mode.miss(none, text));
  }

  /** A dict literal; keys must be strings (`__proto__` is an ordinary key). */
  private buildDict(n: Of<'dict'>, text: string): Ev {
    const pairs = n.pairs.map(([k, v]) => [this.strict(k), this.strict(v)] as const);
    return (s) => {
      const out: Record<string, Value> = {};
      for (const [kf, vf] of pairs) {
        const k = unwrap(kf(s));
        if (typeof k !== 'string')
          throw new ExprEvalError(`dict keys must be strings, got ${typeName(k)}`, text);
        const v = vf(s);
        if (k === '__proto__')
          Object.defineProperty(out, k, {
            value: v,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else out[k] = v;
      }
      return out;
    };
  }
}
