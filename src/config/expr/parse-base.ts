/** Token cursor, error reporting and node construction shared by the parser layers. */
import type { Node } from './ast.js';
import { children } from './ast.js';
import { ExprSyntaxError } from './errors.js';
import type { Token } from './lexer.js';

/** Deepest allowed nesting (parentheses, operator chains, attribute chains). */
export const MAX_DEPTH = 200;

/** Words that are operators, never names. */
export const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'is', 'if', 'else']);

type DOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NodeInit = DOmit<Node, 'depth'>;

export abstract class ParserBase {
  protected i = 0;
  protected nest = 0;

  constructor(
    protected readonly src: string,
    protected readonly toks: Token[],
    /** the whole `${{ … }}` text, for error reports */
    protected readonly part: string,
  ) {}

  protected peek(ahead = 0): Token {
    return this.toks[Math.min(this.i + ahead, this.toks.length - 1)];
  }
  protected next(): Token {
    return this.toks[this.i++];
  }
  protected isOp(op: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t.type === 'op' && t.value === op;
  }
  protected isName(name: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t.type === 'name' && t.value === name;
  }
  protected describe(t: Token): string {
    if (t.type === 'end') return "'}}'";
    if (t.type === 'str') return `string ${JSON.stringify(t.value)}`;
    return `'${this.src.slice(t.start, t.end)}'`;
  }
  protected fail(msg: string, at: number): never {
    throw new ExprSyntaxError(msg, at, this.part);
  }
  protected expectOp(op: string): Token {
    if (!this.isOp(op)) this.fail(`expected '${op}', got ${this.describe(this.peek())}`, this.peek().start);
    return this.next();
  }
  protected mk(n: NodeInit): Node {
    let d = 0;
    const node: Node = Object.assign(n, { depth: 0 });
    for (const c of children(node)) d = Math.max(d, c.depth);
    node.depth = d + 1;
    if (node.depth > MAX_DEPTH) this.fail('expression nested too deeply', node.start);
    return node;
  }
  protected enter(at: number): void {
    if (++this.nest > MAX_DEPTH) this.fail('expression nested too deeply', at);
  }
}
