/**
 * Jinja2 tests (`x is name`, `x is not name`, `x is name(arg)`, `x is name arg`).
 * Type tests answer false for an undefined operand; value tests need a defined one.
 */
import { compare, contains, eq, mod } from './ops.js';
import { DomainValue, type Value, isDict, isNumeric, kindOf, unwrap, withoutPrototype } from './values.js';

export interface TestSpec {
  /** number of arguments accepted */
  min: number;
  max: number;
  /** result for an undefined operand; 'error' raises the undefined error */
  onUndefined: boolean | 'error';
  fn: (v: Value, args: Value[]) => boolean;
}

const typeTest = (fn: (v: Value) => boolean): TestSpec => ({
  min: 0,
  max: 0,
  onUndefined: false,
  fn: (v) => fn(unwrap(v)),
});
const valueTest = (n: number, fn: (v: Value, args: Value[]) => boolean): TestSpec => ({
  min: n,
  max: n,
  onUndefined: 'error',
  fn,
});

function isSeq(v: Value): boolean {
  const k = kindOf(v);
  return k === 'str' || k === 'list' || k === 'tuple' || k === 'dict';
}

/** Jinja2: `value % num == 0` (Python `%`, so a string operand is formatted, as in Jinja2). */
function divisible(v: Value, n: Value): boolean {
  return eq(mod(v, n), 0);
}

/** Jinja2: `value % 2 == 0` (even) / `value % 2 == 1` (odd). */
function remainderIs(v: Value, r: number): boolean {
  return eq(mod(v, 2), r);
}

const cmp = (ok: (c: number) => boolean, op: string) => valueTest(1, (v, [o]) => ok(compare(v, o, op)));

export const TESTS: Record<string, TestSpec> = withoutPrototype({
  defined: { min: 0, max: 0, onUndefined: false, fn: () => true },
  undefined: { min: 0, max: 0, onUndefined: true, fn: () => false },
  none: typeTest((v) => v === null),
  number: typeTest(isNumeric),
  string: typeTest((v) => typeof v === 'string'),
  boolean: typeTest((v) => typeof v === 'boolean'),
  true: typeTest((v) => v === true),
  false: typeTest((v) => v === false),
  integer: typeTest((v) => kindOf(v) === 'int'),
  float: typeTest((v) => kindOf(v) === 'float'),
  mapping: typeTest(isDict),
  sequence: typeTest(isSeq),
  iterable: typeTest(isSeq),
  lower: typeTest((v) => typeof v === 'string' && v === v.toLowerCase() && v !== v.toUpperCase()),
  upper: typeTest((v) => typeof v === 'string' && v === v.toUpperCase() && v !== v.toLowerCase()),
  even: valueTest(0, (v) => remainderIs(v, 0)),
  odd: valueTest(0, (v) => remainderIs(v, 1)),
  divisibleby: valueTest(1, (v, [n]) => divisible(v, n)),
  eq: valueTest(1, (v, [o]) => eq(v, o)),
  ne: valueTest(1, (v, [o]) => !eq(v, o)),
  lt: cmp((c) => c < 0, '<'),
  le: cmp((c) => c <= 0, '<='),
  gt: cmp((c) => c > 0, '>'),
  ge: cmp((c) => c >= 0, '>='),
  in: valueTest(1, (v, [seq]) => contains(seq, v)),
  sameas: valueTest(1, (v, [o]) => {
    const a = v instanceof DomainValue ? unwrap(v) : v;
    const b = o instanceof DomainValue ? unwrap(o) : o;
    return typeof a === 'object' && a !== null ? a === b : kindOf(a) === kindOf(b) && eq(a, b);
  }),
} satisfies Record<string, TestSpec>);
TESTS.equalto = TESTS.eq;
TESTS.lessthan = TESTS.lt;
TESTS.greaterthan = TESTS.gt;
