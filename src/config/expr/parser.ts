/**
 * Recursive-descent parser for Jinja2 expressions, with Jinja2's precedence (lowest first):
 *   `x if c else y` < `or` < `and` < `not` < comparisons/`in`/`not in` (chained like Python)
 *   < `+ -` < `~` < `* / // %` < `**` (left-assoc, like Jinja2) < unary `- +`
 *   < postfix `.a [i] [a:b] (…)` and `| filter` / `is test` (bind to the unary operand:
 *   `-2**2` is 4 and `x | length + 1` is `(x|length) + 1`, exactly as Jinja2 evaluates them).
 */
import type { BinOp, CmpOp, Node } from './ast.js';
import { PostfixParser } from './parse-postfix.js';

export { MAX_DEPTH } from './parse-base.js';

const CMP: readonly CmpOp[] = ['==', '!=', '<', '<=', '>', '>='];

export class Parser extends PostfixParser {
  parseTop(): Node {
    if (this.peek().type === 'end')
      this.fail("empty expression: expected an expression inside '${{ }}'", this.peek().start);
    const node = this.parseTuple(false);
    const t = this.peek();
    if (t.type !== 'end') this.fail(`unexpected ${this.describe(t)}; expected an operator or '}}'`, t.start);
    return node;
  }

  protected parseTuple(explicit: boolean): Node {
    const start = this.peek().start;
    const items: Node[] = [];
    let isTuple = false;
    for (;;) {
      if (items.length) this.expectOp(',');
      if (this.peek().type === 'end' || this.isOp(')')) break;
      items.push(this.parseExpr());
      if (this.isOp(',')) isTuple = true;
      else break;
    }
    if (!isTuple && items.length === 1) return items[0];
    if (!isTuple && !explicit) this.fail('expected an expression', this.peek().start);
    return this.mk({ kind: 'tuple', items, start, end: this.toks[this.i - 1]?.end ?? start });
  }

  parseExpr(): Node {
    this.enter(this.peek().start);
    let node = this.parseOr();
    while (this.isName('if')) {
      this.next();
      const test = this.parseOr();
      let other: Node | undefined;
      if (this.isName('else')) {
        this.next();
        other = this.parseExpr();
      }
      node = this.mk({ kind: 'cond', test, then: node, other, start: node.start, end: (other ?? test).end });
    }
    this.nest--;
    return node;
  }

  private binaryLoop(ops: readonly BinOp[], isName: boolean, operand: () => Node): Node {
    let l = operand();
    for (;;) {
      const t = this.peek();
      const matches = isName ? t.type === 'name' : t.type === 'op';
      const op = matches ? ops.find((o) => o === t.value) : undefined;
      if (op === undefined) return l;
      this.next();
      const r = operand();
      l = this.mk({ kind: 'binary', op, l, r, start: l.start, end: r.end });
    }
  }

  private parseOr(): Node {
    return this.binaryLoop(['or'], true, () => this.parseAnd());
  }
  private parseAnd(): Node {
    return this.binaryLoop(['and'], true, () => this.parseNot());
  }
  private parseNot(): Node {
    if (this.isName('not')) {
      const t = this.next();
      this.enter(t.start);
      const x = this.parseNot();
      this.nest--;
      return this.mk({ kind: 'unary', op: 'not', x, start: t.start, end: x.end });
    }
    return this.parseCompare();
  }
  private parseCompare(): Node {
    const first = this.parseMath1();
    const ops: CmpOp[] = [];
    const rest: Node[] = [];
    for (;;) {
      const t = this.peek();
      const cmp = t.type === 'op' ? CMP.find((o) => o === t.value) : undefined;
      if (cmp !== undefined) {
        this.next();
        ops.push(cmp);
      } else if (this.isName('in')) {
        this.next();
        ops.push('in');
      } else if (this.isName('not') && this.isName('in', 1)) {
        this.i += 2;
        ops.push('not in');
      } else break;
      rest.push(this.parseMath1());
    }
    if (!ops.length) return first;
    return this.mk({ kind: 'compare', first, ops, rest, start: first.start, end: rest[rest.length - 1].end });
  }
  private parseMath1(): Node {
    return this.binaryLoop(['+', '-'], false, () => this.parseConcat());
  }
  private parseConcat(): Node {
    return this.binaryLoop(['~'], false, () => this.parseMath2());
  }
  private parseMath2(): Node {
    return this.binaryLoop(['*', '/', '//', '%'], false, () => this.parsePow());
  }
  private parsePow(): Node {
    return this.binaryLoop(['**'], false, () => this.parseUnary(true));
  }

  private parseUnary(withFilter: boolean): Node {
    const t = this.peek();
    let node: Node;
    const sign = this.isOp('-') ? '-' : this.isOp('+') ? '+' : undefined;
    if (sign !== undefined) {
      this.next();
      this.enter(t.start);
      const x = this.parseUnary(false);
      this.nest--;
      node = this.mk({ kind: 'unary', op: sign, x, start: t.start, end: x.end });
    } else {
      node = this.parsePrimary();
    }
    node = this.parsePostfix(node);
    return withFilter ? this.parseFilterExpr(node) : node;
  }
}
