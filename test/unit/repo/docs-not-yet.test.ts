/**
 * Docs that cannot drift from the code. What does not run today is derived, never listed here:
 * the rows of src/plan/not-yet.ts (each row's feature: its backticked names and the word before
 * them) and the backend kinds' capabilities (a kind whose `monitor` capability is off). Everything
 * else runs. Then, over every statement users read (README, CHANGELOG, docs/, examples/, samples,
 * skills, every `--help`, the schema's descriptions: test/helpers/doc-statements.ts):
 * - a statement that calls something planned / dry-run only / not yet / not implemented must name
 *   something that does not run (a name of a not-yet row, or a kind with the capability off);
 * - the reverse: a statement about a not-yet feature must say that it does not run (not yet,
 *   refused, ignored, warned, plans only, …);
 * - the monitor: README's table row and its "Hardware monitor" section name exactly the backends
 *   whose kind samples `monitor:` blocks.
 * When a row of not-yet.ts goes, the docs that still call it "not yet" fail here (rule 1).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BACKEND_KINDS, backendCliFlags } from '../../../src/backends/registry.js';
import { buildProgram } from '../../../src/cli/main.js';
import { declareBackendFlags } from '../../../src/cli/backend-flags.js';
import { recipeJsonSchema } from '../../../src/config/schema/index.js';
import { NOT_YET, type NotYetRow } from '../../../src/plan/not-yet.js';
import { REPO } from '../../helpers/cli.js';
import {
  docFileStatements,
  helpStatements,
  markdownStatements,
  schemaStatements,
  type Statement,
} from '../../helpers/doc-statements.js';

/** Words that call something not running. */
const NOT_RUNNING: RegExp[] = [
  /\bnot yet\b(?! (?:finished|started|ended|completed?|ready|done|written|reached|seen|exist))/i,
  /\bplans only\b/i, // not `--dry-run`'s own "plan only"
  /\bplanned only\b/i,
  /\bonly (?:be )?planned\b/i,
  /\bplanned\s*\(dry-run\b/i,
  /\bplanned and dry-run\b/i,
  /\bdry-run only\b/i,
  /\bdry-run today\b/i,
  /\bnot implemented\b/i,
  /\bto come\b/i,
  /\bcoming soon\b/i,
  /\bcomes with the\b/i,
  /\bin a (?:later|future) (?:version|release)\b/i,
  /\bnot in this version\b/i,
];

/** Words that say a feature does not run as written (what a statement about a not-yet row must carry). */
const SAYS_NOT_RUNNING =
  /not yet|refus|ignored|warn|plans only|planned only|not implemented|not enforced|skipped|does not|do not|is not|not run|only metadata|metadata only/i;

interface NotRunning {
  /** where this fact comes from */
  source: string;
  /** the word before the names in the row's feature (Docker, task, …); undefined: the names alone */
  qualifier?: string;
  names: string[];
  /** a generic name (`monitor`) counts as named only next to its qualifier */
  generic?: boolean;
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `name` in backticks, or bare where the name cannot be an ordinary word (hf://, include_nodes) */
function mentions(text: string, name: string): boolean {
  if (new RegExp('`' + esc(name) + '(?![\\w-])').test(text)) return true;
  return /[:_/.]/.test(name) && new RegExp('(^|[^\\w.-])' + esc(name) + '(?![\\w-])').test(text);
}

const hasWord = (text: string, word: string) => new RegExp(`\\b${esc(word)}\\b`, 'i').test(text);

/** "Docker `include_nodes`", "a task's own `timeout:`": the qualifier shortly before the name */
const qualified = (text: string, qualifier: string, name: string) =>
  new RegExp(`\\b${esc(qualifier)}\\b[^.,;\`|]{0,12}\`${esc(name)}(?![\\w-])`, 'i').test(text);

/** README "What runs today" rows: [feature, today] */
function readmeTable(readme: string): string[][] {
  const section = readme.slice(readme.indexOf('## What runs today'));
  const end = section.indexOf('\n## ', 3);
  return section
    .slice(0, end > 0 ? end : undefined)
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| feature') && !l.startsWith('|---'))
    .map((l) => l.split(' | ').map((c) => c.replace(/^\| ?| ?\|$/g, '').trim()));
}

/** What does not run, from not-yet.ts and the kinds' capabilities. */
export function notRunning(rows: NotYetRow[], readme: string): NotRunning[] {
  // a name that also appears in a README row that runs (k8s_mpi) is not the row's own
  const running = readmeTable(readme)
    .filter(([, today]) => /^runs/.test(today ?? ''))
    .flatMap(([feature]) => [...(feature ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]));
  const facts = rows.map((r): NotRunning => {
    const names = [...r.feature.matchAll(/`([^`]+)`/g)]
      .map((m) => (m[1].includes('://') ? m[1] : m[1].split(/[: ]/)[0]))
      .concat(r.covers.filter((c) => c.includes('://')))
      .filter((n) => n && !running.includes(n));
    // the word before the first name: "Docker `include_nodes`", "task `timeout:`"; none for "`hf://`, …"
    const qualifier = r.feature.slice(0, r.feature.indexOf('`')).trim().split(/\s+/).pop() || undefined;
    return {
      source: `src/plan/not-yet.ts row '${r.id}'`,
      qualifier,
      names: [...new Set(names)],
    };
  });
  for (const k of Object.values(BACKEND_KINDS))
    if (!k.capabilities.monitor)
      facts.push({
        source: `the ${k.type} kind's capabilities.monitor (false)`,
        qualifier: k.capabilities.label,
        names: ['monitor'],
        generic: true,
      });
  return facts;
}

export interface Finding {
  at: string;
  problem: string;
}

/**
 * The contradictions in `statements`. `knownFlags`: the flags sflow's commands define; a statement
 * that says "not in this version" about a flag no command has (the original tool's) is true.
 */
export function contradictions(
  statements: Statement[],
  facts: NotRunning[],
  knownFlags: Set<string>,
): Finding[] {
  const findings: Finding[] = [];
  const quote = (s: Statement) => `"${s.text.length > 160 ? `${s.text.slice(0, 157)}…` : s.text}"`;
  for (const s of statements) {
    const at = `${s.where}:${s.line}`;
    const phrase = NOT_RUNNING.map((re) => re.exec(s.text)?.[0]).find(Boolean);
    // rule 1: "not yet" about something: that something must be listed as not running
    const named = facts.filter(
      (f) =>
        f.names.some((n) => mentions(s.text, n)) &&
        (!f.generic || !f.qualifier || hasWord(s.text, f.qualifier)),
    );
    const foreignFlag = [...s.text.matchAll(/`(--[a-z][\w-]*)/g)].some((m) => !knownFlags.has(m[1]));
    if (phrase && named.length === 0 && !foreignFlag)
      findings.push({
        at,
        problem: `says "${phrase}" but names nothing src/plan/not-yet.ts (or a backend kind's capabilities) lists as not running; everything else runs today: ${quote(s)}`,
      });
    // rule 2: a statement about a not-yet feature (its qualifier and a name) must say it does not run
    for (const f of facts) {
      const about = f.names.some((n) =>
        f.qualifier ? qualified(s.text, f.qualifier, n) : mentions(s.text, n),
      );
      if (about && !SAYS_NOT_RUNNING.test(s.text))
        findings.push({
          at,
          problem: `is about ${f.names.map((n) => `\`${n}\``).join(' / ')}${f.qualifier ? ` (${f.qualifier})` : ''}, which does not run (${f.source}), without saying so: ${quote(s)}`,
        });
    }
  }
  return findings;
}

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const facts = notRunning(NOT_YET, readme);
const program = buildProgram();
// the backend types' flags (declared when run/recover is dispatched)
for (const c of program.commands) declareBackendFlags(c, backendCliFlags);
const flags = new Set(
  [program, ...program.commands].flatMap((c) => c.options.flatMap((o) => [o.long ?? '', o.short ?? ''])),
);
const show = (f: Finding[]) => f.map((x) => `${x.at}: ${x.problem}`).join('\n');

describe('docs that cannot drift from src/plan/not-yet.ts', () => {
  it('derives what does not run from the table and the capabilities', () => {
    expect(facts.length).toBeGreaterThanOrEqual(NOT_YET.length);
    // a row names something, unless every name it has is a feature that runs elsewhere (the
    // one-machine node filters: `include_nodes` runs on Slurm and Docker pools)
    const runningNames = readmeTable(readme)
      .filter(([, today]) => /^runs/.test(today ?? ''))
      .flatMap(([feature]) => [...(feature ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]));
    NOT_YET.forEach((row, i) => {
      const own = [...row.feature.matchAll(/`([^`]+)`/g)].map((m) => m[1].split(/[: ]/)[0]);
      if (own.every((n) => runningNames.includes(n))) return;
      expect(facts[i].names.length, facts[i].source).toBeGreaterThan(0);
    });
  });

  it('no doc, sample, skill, --help or schema text calls something that runs "planned" / "not yet", or the reverse', () => {
    const statements = [
      ...docFileStatements(REPO),
      ...helpStatements(program),
      ...schemaStatements(recipeJsonSchema()),
    ];
    expect(statements.length).toBeGreaterThan(500);
    expect(statements.some((s) => s.where.endsWith('--help'))).toBe(true);
    expect(show(contradictions(statements, facts, flags))).toBe('');
  });

  it('finds a planted contradiction of either kind (the check can fail)', () => {
    const planted = markdownStatements(
      'planted.md',
      [
        'The Docker backend is planned (dry-run only); Slurm runs.',
        '',
        '- Not yet: task `ports:` (a run ignores them).',
        '',
        'A task `ports:` list is advertised to its dependents.',
      ].join('\n'),
    );
    const found = contradictions(planted, facts, flags);
    expect(found.map((f) => f.at)).toEqual(['planted.md:1', 'planted.md:5']);
    expect(found[0].problem).toContain('says "planned (dry-run"');
    expect(found[1].problem).toContain("which does not run (src/plan/not-yet.ts row 'task-ports')");
  });
});

describe("the monitor's backends, from the kinds' capabilities", () => {
  const kinds = Object.values(BACKEND_KINDS);
  const sampled = kinds.filter((k) => k.capabilities.monitor).map((k) => k.capabilities.label);

  it('README\'s table row and "Hardware monitor" section name every backend that samples it', () => {
    const row = readmeTable(readme).find(([f]) => /^resource monitors/.test(f ?? ''));
    expect(row, 'README "What runs today" has a "resource monitors …" row').toBeDefined();
    const start = readme.indexOf('## Hardware monitor');
    const section = readme.slice(start, readme.indexOf('\n## ', start + 3));
    for (const label of sampled) {
      expect(hasWord(row![0], label), `the monitor row names ${label}`).toBe(true);
      expect(hasWord(section, label), `the Hardware monitor section names ${label}`).toBe(true);
    }
  });
});
