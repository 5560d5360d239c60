/**
 * The `${{ }}` expression language (spec config.md §3): a sandboxed Jinja2 expression subset with
 * Python semantics — own tokenizer, parser, and closure compiler; no eval, no template engine.
 *
 * Typical use: `const t = compileTemplate(s)` once (throws ExprSyntaxError), then
 * `renderTemplate(t, scope)` / `evaluateTemplate(t, scope)` as often as needed (throw
 * ExprUndefinedError / ExprEvalError).
 */
export {
  DomainValue,
  PyFloat,
  cleanRead,
  isDict,
  isTuple,
  makeTuple,
  withoutPrototype,
  type Scope,
  type Value,
} from './values.js';
export { ExprEvalError, ExprSyntaxError, ExprUndefinedError, isExprError } from './errors.js';
export { floatRepr, renderValue, reprValue, toNative, type NativeValue } from './render.js';
export {
  compileTemplate,
  evaluateTemplate,
  hasExpression,
  renderTemplate,
  substituteTemplate,
  type CompiledTemplate,
  type ExpressionPart,
  type RefPath,
} from './template.js';
export { FILTERS } from './filters.js';
export { TESTS } from './istests.js';
export { EXPR_LIMITS, withExpressionBudget } from './meter.js';
