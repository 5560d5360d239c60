/**
 * The statements of sflow's user-facing texts, for test/unit/repo/docs-not-yet.test.ts: README,
 * CHANGELOG, docs/, examples/, the shipped samples and skills (Markdown paragraphs, list items and
 * table rows; YAML comment blocks and lines), every command's `--help` and the recipe schema's
 * descriptions. Each statement keeps its file and first line, so a finding points at it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Command } from 'commander';

export interface Statement {
  /** file (relative to the repository) or `sflow <command> --help` / `schema <path>` */
  where: string;
  line: number;
  text: string;
}

export function markdownStatements(where: string, text: string): Statement[] {
  const out: Statement[] = [];
  let cur: { line: number; parts: string[] } | undefined;
  let fence = false;
  const flush = () => {
    if (cur?.parts.length) out.push({ where, line: cur.line, text: cur.parts.join(' ') });
    cur = undefined;
  };
  text.split('\n').forEach((l, i) => {
    const line = i + 1;
    if (/^\s*```/.test(l)) {
      flush();
      fence = !fence;
    } else if (fence || /^\s*\|/.test(l) || /^#/.test(l)) {
      // code lines (comments in examples), table rows and headings stand alone
      flush();
      if (l.trim()) out.push({ where, line, text: l.trim() });
    } else if (!l.trim()) flush();
    else if (/^\s*([-*]|\d+\.)\s/.test(l)) {
      flush();
      cur = { line, parts: [l.trim()] };
    } else {
      cur ??= { line, parts: [] };
      cur.parts.push(l.trim());
    }
  });
  flush();
  return out;
}

/** YAML: consecutive comment lines are one statement; every other line (with its comment) one each */
export function yamlStatements(where: string, text: string): Statement[] {
  const out: Statement[] = [];
  let block: Statement | undefined;
  text.split('\n').forEach((l, i) => {
    const comment = /^\s*#\s?(.*)$/.exec(l);
    if (comment) {
      if (block) block.text += ` ${comment[1].trim()}`;
      else block = { where, line: i + 1, text: comment[1].trim() };
      return;
    }
    if (block) out.push(block);
    block = undefined;
    if (l.trim()) out.push({ where, line: i + 1, text: l.trim() });
  });
  if (block) out.push(block);
  return out;
}

function filesUnder(dir: string, ext: RegExp): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return filesUnder(p, ext);
    return ext.test(n) ? [p] : [];
  });
}

/** The repository's user-facing files: README, CHANGELOG, docs/, examples/, assets/samples, assets/skills */
export function docFileStatements(repo: string): Statement[] {
  const files = [
    join(repo, 'README.md'),
    join(repo, 'CHANGELOG.md'),
    ...filesUnder(join(repo, 'docs'), /\.md$/),
    ...filesUnder(join(repo, 'examples'), /\.(ya?ml|md)$/),
    ...filesUnder(join(repo, 'assets', 'samples'), /\.(ya?ml|md)$/),
    ...filesUnder(join(repo, 'assets', 'skills'), /\.md$/),
  ];
  return files.flatMap((f) => {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      return []; // CHANGELOG.md in a checkout without one
    }
    const where = relative(repo, f);
    return f.endsWith('.md') ? markdownStatements(where, text) : yamlStatements(where, text);
  });
}

/** Every command's `--help` as printed (one line per option: no wrapping), and each option's text. */
export function helpStatements(program: Command): Statement[] {
  const out: Statement[] = [];
  const walk = (c: Command, name: string) => {
    let text = '';
    c.configureOutput({ writeOut: (s) => (text += s), getOutHelpWidth: () => 10_000 });
    c.outputHelp();
    const where = `${name} --help`;
    text.split('\n').forEach((l, i) => l.trim() && out.push({ where, line: i + 1, text: l.trim() }));
    for (const sub of c.commands) walk(sub, `${name} ${sub.name()}`);
  };
  walk(program, 'sflow');
  return out;
}

/** Every `description` of the recipe JSON Schema (what `sflow skill` writes into the field reference). */
export function schemaStatements(schema: unknown): Statement[] {
  const out: Statement[] = [];
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        if (k === 'description' && typeof x === 'string')
          out.push({ where: `schema ${path}`, line: 1, text: x });
        else walk(x, `${path}.${k}`);
      }
  };
  walk(schema, '$');
  return out;
}
