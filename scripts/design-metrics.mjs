#!/usr/bin/env node
/**
 * The design figures of issue 26, counted the same way every time (the TypeScript parser, not
 * grep), printed by CI (.ci/run) and enforceable once the refactor that brings them down lands:
 *
 *   casts            `x as T` and `<T>x` in src/ (`as const` is not a cast)
 *   record-unknown   `Record<string, unknown>` in src/plan and src/backends, also through a
 *                    same-file or imported alias (`type Obj = Record<string, unknown>`), outside
 *                    the named parse boundaries (scripts/design-boundaries.mjs)
 *   as-unknown-as    `x as unknown as T` in src/plan and src/backends outside the boundaries
 *   long-functions   functions over 100 lines without a one-line reason comment directly above
 *                    them (`// long: <reason>`)
 *   probe-kind-files source and test files of the commit that added a probe kind's registry line
 *                    (src/probes/registry.ts), for kinds added after the registry existed; the
 *                    user docs it touched are listed beside it
 *
 * node scripts/design-metrics.mjs [--json] [--list] [--enforce | --ratchet] [--root DIR]
 *   --list      every counted place as file:line
 *   --root      measure another checkout (e.g. `git worktree add /tmp/old main`)
 *   --enforce   exit 1 when a figure is over its limit (LIMITS below, issue 26's acceptance)
 *   --ratchet   exit 1 when a figure is over the figure reached so far (REACHED below; CI runs
 *               this until the LIMITS hold): a figure may only go down; lower REACHED with it
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { isParseBoundary, RECORD_SCOPE } from './design-boundaries.mjs';

export const LIMITS = {
  casts: 240,
  recordUnknown: 0,
  asUnknownAs: 0,
  longFunctions: 0,
  /** its module, the registry and its tests (docs/adding-a-probe.md; test/unit/repo/adding-a-kind.test.ts) */
  probeKindFiles: 3,
};
/**
 * The figures reached so far (issue 26's second part, on branch arch2): CI fails when one goes
 * back up. Lower an entry when a change brings its figure down; never raise one to let a change in.
 */
export const REACHED = {
  casts: 239,
  recordUnknown: 0,
  asUnknownAs: 0,
  longFunctions: 0,
  probeKindFiles: 3,
};
export const LONG_FUNCTION_LINES = 100;
const REASON = /^\/\/\s*long:\s*\S/;

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function parse(file, text) {
  return ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
}

const isRecordUnknown = (n) =>
  ts.isTypeReferenceNode(n) &&
  ts.isIdentifier(n.typeName) &&
  n.typeName.text === 'Record' &&
  n.typeArguments?.length === 2 &&
  n.typeArguments[0].kind === ts.SyntaxKind.StringKeyword &&
  n.typeArguments[1].kind === ts.SyntaxKind.UnknownKeyword;

const isConstAssertion = (type) =>
  ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName) && type.typeName.text === 'const';

/** names of the type aliases for Record<string, unknown> a file declares (exported or not) */
export function recordAliases(file, text) {
  const out = new Set();
  for (const s of parse(file, text).statements)
    if (ts.isTypeAliasDeclaration(s) && !s.typeParameters && isRecordUnknown(s.type)) out.add(s.name.text);
  return out;
}

function functionName(fn) {
  if (fn.name && (ts.isIdentifier(fn.name) || ts.isStringLiteral(fn.name))) return fn.name.text;
  if (ts.isConstructorDeclaration(fn)) return 'constructor';
  const p = fn.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)))
    if (ts.isIdentifier(p.name)) return p.name.text;
  return '<anonymous>';
}

/** the node whose leading comments speak for a function: its statement, member or property */
function anchorOf(fn) {
  let n = fn;
  while (
    n.parent &&
    !ts.isSourceFile(n.parent) &&
    !ts.isBlock(n.parent) &&
    !ts.isModuleBlock(n.parent) &&
    !ts.isClassLike(n.parent) &&
    !ts.isObjectLiteralExpression(n.parent) &&
    !ts.isCaseClause(n.parent) &&
    !ts.isDefaultClause(n.parent)
  )
    n = n.parent;
  return n;
}

function hasReason(sf, node) {
  const text = sf.getFullText();
  const ranges = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  return ranges.some(
    (r) => r.kind === ts.SyntaxKind.SingleLineCommentTrivia && REASON.test(text.slice(r.pos, r.end)),
  );
}

/**
 * Everything counted in one source file. `aliases`: names (in this file) that stand for
 * Record<string, unknown>: its own aliases and those it imports.
 */
export function analyseSource(file, text, aliases = recordAliases(file, text)) {
  const sf = parse(file, text);
  const line = (n) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const out = { casts: [], recordUnknown: [], asUnknownAs: [], longFunctions: [] };
  const visit = (n) => {
    if (ts.isAsExpression(n) || ts.isTypeAssertionExpression(n)) {
      if (!isConstAssertion(n.type)) out.casts.push({ line: line(n) });
      if (
        ts.isAsExpression(n) &&
        ts.isAsExpression(n.expression) &&
        n.expression.type.kind === ts.SyntaxKind.UnknownKeyword
      )
        out.asUnknownAs.push({ line: line(n) });
    }
    if (isRecordUnknown(n) && !(ts.isTypeAliasDeclaration(n.parent) && aliases.has(n.parent.name.text)))
      out.recordUnknown.push({ line: line(n) });
    else if (
      ts.isTypeReferenceNode(n) &&
      ts.isIdentifier(n.typeName) &&
      !n.typeArguments &&
      aliases.has(n.typeName.text)
    )
      out.recordUnknown.push({ line: line(n), alias: n.typeName.text });
    if (ts.isFunctionLike(n) && 'body' in n && n.body) {
      const first = line(n);
      const last = sf.getLineAndCharacterOfPosition(n.getEnd()).line + 1;
      const lines = last - first + 1;
      if (lines > LONG_FUNCTION_LINES && !hasReason(sf, anchorOf(n)))
        out.longFunctions.push({ line: first, name: functionName(n), lines });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function sourceFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (/\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Local names bound to Record<string, unknown> aliases by `import { X as Y } from './f.js'`. */
function importedAliases(sf, file, exported, root) {
  const out = new Set();
  for (const s of sf.statements) {
    if (!ts.isImportDeclaration(s) || !ts.isStringLiteral(s.moduleSpecifier)) continue;
    const spec = s.moduleSpecifier.text;
    if (!spec.startsWith('.')) continue;
    const target = relative(root, resolve(dirname(file), spec)).replace(/\.js$/, '.ts');
    const names = exported.get(target) ?? exported.get(target.replace(/\.ts$/, '.tsx'));
    const bindings = s.importClause?.namedBindings;
    if (!names || !bindings || !ts.isNamedImports(bindings)) continue;
    for (const el of bindings.elements)
      if (names.has((el.propertyName ?? el.name).text)) out.add(el.name.text);
  }
  return out;
}

/** files of the commit that added each probe kind's registry line, for kinds newer than the registry */
export function probeKindCommits(root = REPO) {
  const registry = 'src/probes/registry.ts';
  let text;
  try {
    text = readFileSync(join(root, registry), 'utf8');
  } catch {
    return { error: `${registry} not found` };
  }
  const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', timeout: 30_000 }).trim();
  let created;
  try {
    created = git('log', '--diff-filter=A', '--format=%H', '--', registry).split('\n').at(-1);
  } catch {
    return { error: 'no git history' };
  }
  if (!created) return { error: `${registry} is not committed yet` };
  const kinds = [];
  for (const m of text.matchAll(/^ {2}(\w+): (\w+),$/gm)) {
    const sha = git('log', '--reverse', '--format=%H', '-S', m[0].trim(), '--', registry).split('\n')[0];
    if (!sha || sha === created) continue;
    const files = git('show', '--name-only', '--format=', sha).split('\n').filter(Boolean);
    const code = files.filter((f) => f.startsWith('src/') || f.startsWith('test/'));
    kinds.push({
      kind: m[1],
      commit: sha.slice(0, 12),
      files: code,
      docs: files.filter((f) => !code.includes(f)),
    });
  }
  return { kinds };
}

export function measure(root = REPO) {
  const files = sourceFiles(join(root, 'src')).map((f) => ({ abs: f, rel: relative(root, f) }));
  const texts = new Map(files.map((f) => [f.rel, readFileSync(f.abs, 'utf8')]));
  const exported = new Map();
  for (const [rel, text] of texts) {
    const a = recordAliases(rel, text);
    if (a.size) exported.set(rel, a);
  }
  const places = { casts: [], recordUnknown: [], asUnknownAs: [], longFunctions: [] };
  for (const f of files) {
    const text = texts.get(f.rel);
    const sf = parse(f.rel, text);
    const aliases = new Set([...(exported.get(f.rel) ?? []), ...importedAliases(sf, f.abs, exported, root)]);
    const r = analyseSource(f.rel, text, aliases);
    const at = (list) => list.map((p) => ({ file: f.rel, ...p }));
    places.casts.push(...at(r.casts));
    places.longFunctions.push(...at(r.longFunctions));
    if (RECORD_SCOPE.some((s) => f.rel.startsWith(s)) && !isParseBoundary(f.rel)) {
      places.recordUnknown.push(...at(r.recordUnknown));
      places.asUnknownAs.push(...at(r.asUnknownAs));
    }
  }
  const probes = probeKindCommits(root);
  const probeKindFiles = probes.kinds?.length ? Math.max(...probes.kinds.map((k) => k.files.length)) : null;
  return {
    figures: {
      sourceFiles: files.length,
      casts: places.casts.length,
      recordUnknown: places.recordUnknown.length,
      asUnknownAs: places.asUnknownAs.length,
      longFunctions: places.longFunctions.length,
      probeKindFiles,
    },
    places,
    probes,
  };
}

function main(argv) {
  const flag = (f) => argv.includes(f);
  const rootAt = argv.indexOf('--root');
  const m = measure(rootAt >= 0 ? resolve(argv[rootAt + 1]) : REPO);
  if (flag('--json')) {
    console.log(JSON.stringify(flag('--list') ? m : { figures: m.figures, probes: m.probes }, null, 2));
  } else {
    const f = m.figures;
    const row = (name, value, limit, what) =>
      console.log(`${name.padEnd(18)}${String(value ?? '-').padStart(6)}   (limit ${limit})  ${what}`);
    console.log(`design metrics over ${f.sourceFiles} source files in src/ (scripts/design-metrics.mjs)`);
    row('casts', f.casts, `<= ${LIMITS.casts}`, '`x as T` in src/, not `as const`');
    row(
      'record-unknown',
      f.recordUnknown,
      `${LIMITS.recordUnknown}`,
      'Record<string, unknown> in src/plan, src/backends outside parse boundaries',
    );
    row(
      'as-unknown-as',
      f.asUnknownAs,
      `${LIMITS.asUnknownAs}`,
      '`as unknown as` in src/plan, src/backends outside parse boundaries',
    );
    row(
      'long-functions',
      f.longFunctions,
      `${LIMITS.longFunctions}`,
      `functions over ${LONG_FUNCTION_LINES} lines without a \`// long: <reason>\` line above`,
    );
    row(
      'probe-kind-files',
      f.probeKindFiles,
      `<= ${LIMITS.probeKindFiles}`,
      'src/ and test/ files of the commit that added a probe kind',
    );
    if (m.probes.error) console.log(`  probe kinds: ${m.probes.error}`);
    for (const k of m.probes.kinds ?? [])
      console.log(
        `  probe kind ${k.kind} (${k.commit}): ${k.files.join(', ')}${k.docs.length ? `; docs: ${k.docs.join(', ')}` : ''}`,
      );
    if (flag('--list'))
      for (const [name, list] of Object.entries(m.places))
        if (Array.isArray(list))
          for (const p of list)
            console.log(`${name}\t${p.file}:${p.line}${p.name ? `\t${p.name} (${p.lines} lines)` : ''}`);
  }
  const limits = flag('--enforce') ? LIMITS : flag('--ratchet') ? REACHED : undefined;
  if (!limits) return 0;
  const over = Object.entries(limits).filter(([k, limit]) => m.figures[k] !== null && m.figures[k] > limit);
  for (const [k, limit] of over) console.error(`!! ${k}: ${m.figures[k]} is over its limit ${limit}`);
  return over.length ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exitCode = main(process.argv.slice(2));
