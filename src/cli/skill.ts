/** `sflow skill`: install sflow's agent skills for Claude Code, Cursor or Codex (cli.md §9.6). */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { recipeJsonSchema } from '../config/schema/index.js';
import { SflowError } from '../util/sflow-error.js';
import {
  AGENTS,
  mergeManagedBlock,
  parseSkill,
  planInstall,
  type Agent,
  type SkillSource,
} from '../skills/install-plan.js';
import { schemaReference } from '../skills/schema-reference.js';
import { listAssetFiles, readAsset } from '../config/assets.js';
import { reportError } from './errors.js';
import { errorMessage } from '../util/errors.js';

interface SkillOptions {
  target?: string;
  global?: boolean;
  list?: boolean;
  force?: boolean;
  projectDir?: string;
}

export function shippedSkills(): SkillSource[] {
  return listAssetFiles('skills')
    .filter((f) => /^[^/]+\/SKILL\.md$/.test(f))
    .map((f) => parseSkill(f.split('/')[0], readAsset(`skills/${f}`)));
}

const LABEL: Record<Agent, string> = { claude: 'Claude Code', cursor: 'Cursor', codex: 'Codex' };

function planFor(agent: Agent, opts: SkillOptions, skills: SkillSource[], reference: string) {
  return planInstall({
    agent,
    global: Boolean(opts.global),
    projectDir: resolve(opts.projectDir ?? process.cwd()),
    home: process.env.HOME || homedir(),
    codexHome: process.env.CODEX_HOME || undefined,
    skills,
    schemaReference: reference,
  });
}

function shown(p: string): string {
  const r = relative(process.cwd(), p);
  return r && !r.startsWith('..') ? r : p;
}

function renderList(skills: SkillSource[], opts: SkillOptions): string {
  const lines = ['Skills shipped with this sflow:', ''];
  for (const s of skills) lines.push(`  ${s.name}`, `      ${s.description}`);
  lines.push('', 'Where each agent gets them:');
  for (const agent of AGENTS) {
    for (const global of [false, true]) {
      let where: string;
      try {
        where = shown(planFor(agent, { ...opts, global }, skills, '').root);
      } catch (e) {
        where = `not supported (${errorMessage(e).split(' (')[0]})`;
      }
      lines.push(`  ${`${LABEL[agent]}${global ? ' --global' : ''}`.padEnd(20)} ${where}`);
    }
  }
  lines.push('', 'Install with: sflow skill --target claude|cursor|codex|all [--global]');
  return lines.join('\n') + '\n';
}

async function askTarget(): Promise<string | undefined> {
  if (!process.stdin.isTTY) return undefined;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const a = (await rl.question('Install sflow skills for which agent? [claude/cursor/codex/all] ')).trim();
    return a || undefined;
  } finally {
    rl.close();
  }
}

function writePlanned(file: { path: string; content: string; managedBlock?: boolean }, force: boolean) {
  const exists = existsSync(file.path);
  const before = exists ? readFileSync(file.path, 'utf8') : '';
  const next = file.managedBlock ? mergeManagedBlock(before, file.content) : file.content;
  if (exists && before === next) return `  = ${shown(file.path)} (unchanged)`;
  if (exists && !file.managedBlock && !force)
    return `  ⚠ ${shown(file.path)} kept: it differs from the shipped version (--force to overwrite)`;
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, next);
  return `  ✓ ${shown(file.path)}${file.managedBlock ? ' (sflow section)' : ''}`;
}

export async function skillCommand(opts: SkillOptions): Promise<number> {
  try {
    const skills = shippedSkills();
    if (skills.length === 0) throw new SflowError('skill.none', 'no skills are installed with this sflow');
    if (opts.list) {
      process.stdout.write(renderList(skills, opts));
      return 0;
    }
    const target = opts.target ?? (await askTarget());
    if (!target) {
      process.stderr.write(renderList(skills, opts));
      process.stderr.write('✗ Usage error: choose an agent with --target claude|cursor|codex|all\n');
      return 2;
    }
    if (target !== 'all' && !(AGENTS as readonly string[]).includes(target))
      throw new SflowError('skill.target', `unknown agent '${target}'`, {
        phase: 'usage',
        hint: 'one of claude, cursor, codex, all',
      });
    const agents = target === 'all' ? [...AGENTS] : [target as Agent];
    const reference = schemaReference(recipeJsonSchema());
    for (const agent of agents) {
      if (agent === 'cursor' && opts.global && target === 'all') {
        process.stdout.write(`${LABEL[agent]}: skipped (no user-level rule files; install per project)\n`);
        continue;
      }
      const plan = planFor(agent, opts, skills, reference);
      process.stdout.write(`${LABEL[agent]} → ${shown(plan.root)}\n`);
      for (const f of plan.files) process.stdout.write(writePlanned(f, Boolean(opts.force)) + '\n');
    }
    process.stdout.write('✓ Skills installed; restart the agent (or start a new session) to pick them up\n');
    return 0;
  } catch (e) {
    return reportError(e, 'Skill install failed');
  }
}
