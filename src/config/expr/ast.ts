/** Syntax tree of one `${{ … }}` expression. Offsets index the template source string. */
import type { Value } from './values.js';

interface Span {
  start: number;
  end: number;
  /** height of the subtree (1 for a leaf); capped by the parser */
  depth: number;
}

export type Node = Span &
  (
    | { kind: 'const'; value: Value }
    | { kind: 'name'; name: string }
    | { kind: 'attr'; obj: Node; name: string }
    | { kind: 'item'; obj: Node; key: Node }
    | { kind: 'slice'; obj: Node; lo?: Node; hi?: Node; step?: Node }
    | { kind: 'call'; callee: Node; args: Node[]; kwargs: Kwarg[] }
    | { kind: 'filter'; obj: Node; name: string; nameAt: number; args: Node[]; kwargs: Kwarg[] }
    | {
        kind: 'test';
        obj: Node;
        name: string;
        nameAt: number;
        args: Node[];
        kwargs: Kwarg[];
        negated: boolean;
      }
    | { kind: 'unary'; op: '-' | '+' | 'not'; x: Node }
    | { kind: 'binary'; op: BinOp; l: Node; r: Node }
    | { kind: 'compare'; first: Node; ops: CmpOp[]; rest: Node[] }
    | { kind: 'cond'; test: Node; then: Node; other?: Node }
    | { kind: 'list'; items: Node[] }
    | { kind: 'tuple'; items: Node[] }
    | { kind: 'dict'; pairs: [Node, Node][] }
  );

export interface Kwarg {
  name: string;
  at: number;
  value: Node;
}

export type BinOp = '+' | '-' | '*' | '/' | '//' | '%' | '**' | '~' | 'and' | 'or';
export type CmpOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not in';

export function children(n: Node): Node[] {
  switch (n.kind) {
    case 'const':
    case 'name':
      return [];
    case 'attr':
      return [n.obj];
    case 'item':
      return [n.obj, n.key];
    case 'slice':
      return [n.obj, n.lo, n.hi, n.step].filter((x): x is Node => x !== undefined);
    case 'call':
      return [n.callee, ...n.args, ...n.kwargs.map((k) => k.value)];
    case 'filter':
    case 'test':
      return [n.obj, ...n.args, ...n.kwargs.map((k) => k.value)];
    case 'unary':
      return [n.x];
    case 'binary':
      return [n.l, n.r];
    case 'compare':
      return [n.first, ...n.rest];
    case 'cond':
      return n.other ? [n.test, n.then, n.other] : [n.test, n.then];
    case 'list':
    case 'tuple':
      return n.items;
    case 'dict':
      return n.pairs.flat();
  }
}
