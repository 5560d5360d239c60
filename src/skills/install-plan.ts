/**
 * What `sflow skill` writes for each coding agent, and where (each agent's own convention):
 *
 * | agent | project install | `--global` |
 * |---|---|---|
 * | Claude Code | `.claude/skills/<skill>/SKILL.md` (+ `schema-reference.md`) | `~/.claude/skills/…` |
 * | Cursor | `.cursor/rules/<skill>.mdc` (+ `sflow-schema-reference.mdc`) | refused: Cursor keeps user rules in its settings |
 * | Codex | `.agents/skills/<skill>/SKILL.md` + an sflow block in `AGENTS.md` | `~/.agents/skills/…` + `~/.codex/AGENTS.md` |
 *
 * Pure: computes paths and contents; the CLI writes them.
 */
import { join } from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { PACKAGE_NAME } from '../util/package-name.js';

export const AGENTS = ['claude', 'cursor', 'codex'] as const;
export type Agent = (typeof AGENTS)[number];

export interface SkillSource {
  /** folder name, e.g. `sflow-recipes` */
  name: string;
  description: string;
  /** SKILL.md text after the front matter */
  body: string;
}

export interface PlannedFile {
  path: string;
  content: string;
  /** replace only the text between the sflow markers, keep the rest of the file */
  managedBlock?: boolean;
}

export const BLOCK_BEGIN = '<!-- sflow:begin (managed by `sflow skill`; edits inside are overwritten) -->';
export const BLOCK_END = '<!-- sflow:end -->';

/** `---\nname: …\ndescription: …\n---\nbody` → parts. */
export function parseSkill(name: string, text: string): SkillSource {
  const m = /^---\n([\s\S]*?)\n---\n?([\s\S]*)$/.exec(text);
  if (!m) throw new Error(`skill ${name}: SKILL.md has no front matter`);
  const description = /^description:\s*(.+)$/m.exec(m[1])?.[1].trim() ?? '';
  return { name, description, body: m[2] };
}

const SCHEMA_PLACEHOLDER = '{{SCHEMA_REFERENCE}}';

function skillMd(s: SkillSource, schemaRef: string): string {
  return `---\nname: ${s.name}\ndescription: ${s.description}\n---\n${s.body.replace(SCHEMA_PLACEHOLDER, schemaRef)}`;
}

function mdc(description: string, body: string): string {
  return `---\ndescription: ${description}\nglobs:\nalwaysApply: false\n---\n${body}`;
}

export interface PlanInput {
  agent: Agent;
  global: boolean;
  projectDir: string;
  home: string;
  /** `CODEX_HOME` (default `~/.codex`) */
  codexHome?: string;
  skills: SkillSource[];
  schemaReference: string;
}

/** The skill whose text points at the schema reference gets it as a file next to it. */
const REFERENCE_OWNER = 'sflow-recipes';

export function planInstall(p: PlanInput): { root: string; files: PlannedFile[] } {
  const files: PlannedFile[] = [];
  if (p.agent === 'cursor') {
    if (p.global)
      throw new SflowError(
        'skill.cursor_global',
        'Cursor has no user-level rule files (user rules live in its settings), so --global cannot install for Cursor',
        { phase: 'usage', hint: 'install into the project instead: sflow skill --target cursor' },
      );
    const root = join(p.projectDir, '.cursor', 'rules');
    for (const s of p.skills)
      files.push({
        path: join(root, `${s.name}.mdc`),
        content: mdc(s.description, s.body.replace(SCHEMA_PLACEHOLDER, 'the rule `sflow-schema-reference`')),
      });
    files.push({
      path: join(root, 'sflow-schema-reference.mdc'),
      content: mdc(
        'Field-by-field reference of sflow recipe YAML (every section, type and required field). Use when writing or checking an sflow recipe.',
        p.schemaReference,
      ),
    });
    return { root, files };
  }
  const root =
    p.agent === 'claude'
      ? join(p.global ? p.home : p.projectDir, '.claude', 'skills')
      : join(p.global ? p.home : p.projectDir, '.agents', 'skills');
  for (const s of p.skills) {
    files.push({
      path: join(root, s.name, 'SKILL.md'),
      content: skillMd(s, '`schema-reference.md` next to this file'),
    });
    if (s.name === REFERENCE_OWNER)
      files.push({ path: join(root, s.name, 'schema-reference.md'), content: p.schemaReference });
  }
  if (p.agent === 'codex') {
    const agentsMd = p.global
      ? join(p.codexHome ?? join(p.home, '.codex'), 'AGENTS.md')
      : join(p.projectDir, 'AGENTS.md');
    const lines = [
      BLOCK_BEGIN,
      '## sflow',
      '',
      `This project uses sflow (YAML GPU workflows). Skills installed in \`${p.global ? '~/.agents/skills' : '.agents/skills'}\`:`,
      '',
      ...p.skills.map((s) => `- \`${s.name}\`: ${s.description}`),
      '',
      'Always check a recipe change with `sflow run -f <recipe> --dry-run` before running it.',
      `\`sflow\` is the command of the npm package \`${PACKAGE_NAME}\`; where it is not on PATH, run \`npx --package ${PACKAGE_NAME} sflow …\` (never \`npx sflow\`: that name on npm is another package).`,
      BLOCK_END,
    ];
    files.push({ path: agentsMd, content: lines.join('\n') + '\n', managedBlock: true });
  }
  return { root, files };
}

/** `existing` with the sflow block replaced by (or, when absent, appended as) `block`. */
export function mergeManagedBlock(existing: string, block: string): string {
  const start = existing.indexOf(BLOCK_BEGIN);
  const end = existing.indexOf(BLOCK_END);
  if (start >= 0 && end > start) {
    const after = existing.slice(end + BLOCK_END.length).replace(/^\n/, '');
    return existing.slice(0, start) + block + after;
  }
  if (existing.trim() === '') return block;
  return `${existing.replace(/\n*$/, '\n')}\n${block}`;
}
