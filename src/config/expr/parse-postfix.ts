/**
 * Primaries and postfix operators: literals, names, `( )`, `[ ]`, `{ }`, `.attr`, `[i]`, `[a:b:c]`,
 * calls, and the Jinja2 filter/test chain (`| f(…)`, `is [not] t …`).
 */
import type { Kwarg, Node } from './ast.js';
import { KEYWORDS, ParserBase } from './parse-base.js';
import { mkFloat } from './values.js';

export abstract class PostfixParser extends ParserBase {
  abstract parseExpr(): Node;
  protected abstract parseTuple(explicit: boolean): Node;

  protected parsePrimary(): Node {
    const t = this.peek();
    if (t.type === 'name') {
      const v = t.value;
      if (KEYWORDS.has(v)) this.fail(`expected an expression, got keyword '${v}'`, t.start);
      this.next();
      const span = { start: t.start, end: t.end };
      if (v === 'true' || v === 'True') return this.mk({ kind: 'const', value: true, ...span });
      if (v === 'false' || v === 'False') return this.mk({ kind: 'const', value: false, ...span });
      if (v === 'none' || v === 'None') return this.mk({ kind: 'const', value: null, ...span });
      return this.mk({ kind: 'name', name: v, ...span });
    }
    if (t.type === 'str') {
      let s = '';
      let end = t.end;
      for (let st = this.peek(); st.type === 'str'; st = this.peek()) {
        this.next();
        s += st.value;
        end = st.end;
      }
      return this.mk({ kind: 'const', value: s, start: t.start, end });
    }
    if (t.type === 'int' || t.type === 'float') {
      this.next();
      const n = t.value;
      return this.mk({
        kind: 'const',
        value: t.type === 'float' ? mkFloat(n) : n,
        start: t.start,
        end: t.end,
      });
    }
    if (this.isOp('(')) {
      this.next();
      const inner = this.parseTuple(true);
      const close = this.expectOp(')');
      if (inner.kind === 'tuple') return { ...inner, start: t.start, end: close.end };
      return inner;
    }
    if (this.isOp('[')) return this.parseList();
    if (this.isOp('{')) return this.parseDict();
    const prev = this.toks[this.i - 1];
    if (prev && (prev.type === 'op' || prev.type === 'name')) {
      const what = t.type === 'end' ? '' : `, got ${this.describe(t)}`;
      this.fail(`expected an expression after '${this.src.slice(prev.start, prev.end)}'${what}`, t.start);
    }
    this.fail(`expected an expression, got ${this.describe(t)}`, t.start);
  }

  private parseList(): Node {
    const open = this.next();
    const items: Node[] = [];
    while (!this.isOp(']')) {
      if (items.length) this.expectOp(',');
      if (this.isOp(']')) break;
      items.push(this.parseExpr());
    }
    const close = this.next();
    return this.mk({ kind: 'list', items, start: open.start, end: close.end });
  }

  private parseDict(): Node {
    const open = this.next();
    const pairs: [Node, Node][] = [];
    while (!this.isOp('}')) {
      if (pairs.length) this.expectOp(',');
      if (this.isOp('}')) break;
      const k = this.parseExpr();
      this.expectOp(':');
      pairs.push([k, this.parseExpr()]);
    }
    const close = this.next();
    return this.mk({ kind: 'dict', pairs, start: open.start, end: close.end });
  }

  protected parsePostfix(node: Node): Node {
    for (;;) {
      if (this.isOp('.')) {
        this.next();
        const t = this.next();
        if (t.type === 'name') {
          node = this.mk({ kind: 'attr', obj: node, name: t.value, start: node.start, end: t.end });
        } else if (t.type === 'int') {
          const key = this.mk({ kind: 'const', value: t.value, start: t.start, end: t.end });
          node = this.mk({ kind: 'item', obj: node, key, start: node.start, end: t.end });
        } else this.fail(`expected an attribute name or number after '.', got ${this.describe(t)}`, t.start);
      } else if (this.isOp('[')) {
        node = this.parseSubscript(node);
      } else if (this.isOp('(')) {
        node = this.parseCall(node);
      } else return node;
    }
  }

  private parseSubscript(obj: Node): Node {
    this.next();
    let lo: Node | undefined;
    let hi: Node | undefined;
    let step: Node | undefined;
    let isSlice = false;
    if (!this.isOp(':')) lo = this.parseExpr();
    if (this.isOp(':')) {
      isSlice = true;
      this.next();
      if (!this.isOp(']') && !this.isOp(':')) hi = this.parseExpr();
      if (this.isOp(':')) {
        this.next();
        if (!this.isOp(']')) step = this.parseExpr();
      }
    }
    if (this.isOp(',')) this.fail('tuple subscripts are not supported', this.peek().start);
    const close = this.expectOp(']');
    const span = { start: obj.start, end: close.end };
    if (!isSlice) return this.mk({ kind: 'item', obj, key: lo!, ...span });
    return this.mk({ kind: 'slice', obj, lo, hi, step, ...span });
  }

  private parseArgs(): { args: Node[]; kwargs: Kwarg[]; end: number } {
    this.expectOp('(');
    const args: Node[] = [];
    const kwargs: Kwarg[] = [];
    while (!this.isOp(')')) {
      if (args.length || kwargs.length) this.expectOp(',');
      if (this.isOp(')')) break;
      const t = this.peek();
      if (t.type === 'name' && this.isOp('=', 1)) {
        this.i += 2;
        const name = t.value;
        if (kwargs.some((k) => k.name === name)) this.fail(`keyword argument '${name}' repeated`, t.start);
        kwargs.push({ name, at: t.start, value: this.parseExpr() });
      } else {
        if (kwargs.length) this.fail('positional argument follows keyword argument', t.start);
        args.push(this.parseExpr());
      }
    }
    return { args, kwargs, end: this.next().end };
  }

  private parseCall(callee: Node): Node {
    const { args, kwargs, end } = this.parseArgs();
    return this.mk({ kind: 'call', callee, args, kwargs, start: callee.start, end });
  }

  protected parseFilterExpr(node: Node): Node {
    for (;;) {
      if (this.isOp('|')) {
        this.next();
        const t = this.next();
        if (t.type !== 'name')
          this.fail(`expected a filter name after '|', got ${this.describe(t)}`, t.start);
        const call = this.isOp('(') ? this.parseArgs() : { args: [], kwargs: [], end: t.end };
        node = this.mk({
          kind: 'filter',
          obj: node,
          name: t.value,
          nameAt: t.start,
          ...call,
          start: node.start,
        });
      } else if (this.isName('is')) {
        node = this.parseTest(node);
      } else if (this.isOp('(')) {
        node = this.parseCall(node);
      } else return node;
    }
  }

  private parseTest(obj: Node): Node {
    this.next();
    let negated = false;
    if (this.isName('not')) {
      this.next();
      negated = true;
    }
    const t = this.next();
    if (t.type !== 'name') this.fail(`expected a test name after 'is', got ${this.describe(t)}`, t.start);
    let call: { args: Node[]; kwargs: Kwarg[]; end: number } = { args: [], kwargs: [], end: t.end };
    const n = this.peek();
    if (this.isOp('(')) call = this.parseArgs();
    else if (this.isName('is')) this.fail("cannot chain tests with 'is'; use 'and'", n.start);
    else if (
      (n.type === 'name' && !KEYWORDS.has(n.value)) ||
      n.type === 'str' ||
      n.type === 'int' ||
      n.type === 'float' ||
      this.isOp('[') ||
      this.isOp('{')
    ) {
      const arg = this.parsePostfix(this.parsePrimary());
      call = { args: [arg], kwargs: [], end: arg.end };
    }
    return this.mk({
      kind: 'test',
      obj,
      name: t.value,
      nameAt: t.start,
      negated,
      ...call,
      start: obj.start,
    });
  }
}
