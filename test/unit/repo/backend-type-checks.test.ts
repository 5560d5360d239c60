/**
 * Backend-type checks live in src/backends/ only (docs/adding-a-backend.md, issue 7): the planner,
 * the operators, the runtime and the reporters read a backend's capabilities from its registry
 * entry, never compare its type with a literal. This test parses every source file outside
 * src/backends/ and src/config/schema/ (where each type's schema names it) and fails on a
 * comparison with a backend type (`x === 'docker'`, `'slurm' !== x`, `case 'local':`,
 * `['docker', 'slurm'].includes(x)`), listing each as file:line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { BACKEND_KINDS } from '../../../src/backends/registry.js';
import { BACKEND_TYPES } from '../../../src/config/schema/index.js';
import { REPO } from '../../helpers/cli.js';

const TYPES = new Set<string>([...BACKEND_TYPES, ...Object.keys(BACKEND_KINDS)]);
const ALLOWED = ['src/backends/', 'src/config/schema/'];
const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

const isTypeLiteral = (n: ts.Node): boolean =>
  (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && TYPES.has(n.text);

/** `file:line: text` of every comparison with a backend type literal in one source text */
export function backendTypeChecks(file: string, text: string): string[] {
  // parse only what quotes a backend type at all (most files do not)
  if (![...TYPES].some((t) => ['"', "'", '`'].some((q) => text.includes(`${q}${t}${q}`)))) return [];
  const sf = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const out: string[] = [];
  const report = (n: ts.Node) => {
    const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
    out.push(`${file}:${line}: ${n.getText(sf).replace(/\s+/g, ' ')}`);
  };
  const visit = (n: ts.Node): void => {
    if (
      ts.isBinaryExpression(n) &&
      EQUALITY.has(n.operatorToken.kind) &&
      (isTypeLiteral(n.left) || isTypeLiteral(n.right))
    )
      report(n);
    else if (ts.isCaseClause(n) && isTypeLiteral(n.expression)) report(n.expression);
    else if (
      ts.isCallExpression(n) &&
      ts.isPropertyAccessExpression(n.expression) &&
      ['includes', 'indexOf', 'has'].includes(n.expression.name.text) &&
      ts.isArrayLiteralExpression(n.expression.expression) &&
      n.expression.expression.elements.some(isTypeLiteral)
    )
      report(n);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

describe('no backend-type checks outside src/backends/', () => {
  it('knows the backend types it looks for', () => {
    expect([...TYPES]).toEqual(expect.arrayContaining(['local', 'docker', 'slurm', 'kubernetes']));
  });

  it('finds each form of comparison it forbids (and only those)', () => {
    const text = [
      "if (b.type !== 'docker') x();",
      "const y = 'slurm' == t ? 1 : 2;",
      'switch (t) {',
      "  case 'kubernetes':",
      '    break;',
      '}',
      "if (['local', 'other'].includes(t)) x();",
      "const fine = { type: 'local' }, list = ['docker'], op = t === 'docker_run';",
    ].join('\n');
    expect(backendTypeChecks('src/x.ts', text)).toEqual([
      "src/x.ts:1: b.type !== 'docker'",
      "src/x.ts:2: 'slurm' == t",
      "src/x.ts:4: 'kubernetes'",
      "src/x.ts:7: ['local', 'other'].includes(t)",
    ]);
  });

  it('src/ outside src/backends/ and src/config/schema/ compares no value with a backend type', () => {
    const found = sources(join(REPO, 'src'))
      .map((p) => relative(REPO, p).split('\\').join('/'))
      .filter((f) => !ALLOWED.some((a) => f.startsWith(a)))
      .flatMap((f) => backendTypeChecks(f, readFileSync(join(REPO, f), 'utf8')));
    expect(
      found,
      'ask the backend registry (a capability of the kind, src/backends/kind.ts) instead of comparing types',
    ).toEqual([]);
  });
});
