/**
 * `sflow skill`, `sflow upgrade --dry-run` and `sflow completion`, run as a user runs them.
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, sflow } from '../helpers/cli.js';

const dirs: string[] = [];
function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), 'sflow-setup-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const has = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;

/**
 * A test that needs `shell` on PATH: without it the test is skipped with the reason in its name,
 * or fails with that reason under SFLOW_REQUIRE_ENGINES=1 (set by .ci/run, which installs it).
 */
function withShell(shell: string, title: string, fn: () => void): void {
  const why = has(shell) ? undefined : `${shell} is not on PATH (apt-get install ${shell})`;
  if (why && process.env.SFLOW_REQUIRE_ENGINES !== '1') {
    it.skip(`${title} (skipped: ${why})`, fn);
    return;
  }
  it(title, () => {
    if (why) throw new Error(`SFLOW_REQUIRE_ENGINES=1 but ${why}`);
    fn();
  });
}

describe('sflow skill', () => {
  it('--target all --global writes each agent’s files into a temporary HOME', () => {
    const home = scratch();
    const project = scratch();
    const r = sflow(['skill', '--target', 'all', '--global'], {
      cwd: project,
      env: { HOME: home, CODEX_HOME: '' },
    });
    expect(r.code, r.stderr).toBe(0);
    for (const f of [
      '.claude/skills/sflow-recipes/SKILL.md',
      '.claude/skills/sflow-recipes/schema-reference.md',
      '.claude/skills/sflow-triage/SKILL.md',
      '.agents/skills/sflow-recipes/SKILL.md',
      '.agents/skills/sflow-triage/SKILL.md',
      '.codex/AGENTS.md',
    ])
      expect(existsSync(join(home, f)), f).toBe(true);
    expect(r.stdout).toMatch(/Cursor: skipped/);
    const skill = readFileSync(join(home, '.claude/skills/sflow-recipes/SKILL.md'), 'utf8');
    expect(skill).toMatch(/^---\nname: sflow-recipes\ndescription: .+\n---\n/);
    expect(skill).not.toContain('{{SCHEMA_REFERENCE}}');
    const ref = readFileSync(join(home, '.claude/skills/sflow-recipes/schema-reference.md'), 'utf8');
    expect(ref).toContain('## `workflow.tasks[]`');
    expect(ref).toContain('## `backends[] (type: slurm)`');
    expect(ref).toMatch(/\| `depends_on` \| list of string \|/);
    expect(readdirNames(project)).toEqual([]);
  });

  it('a project install: Claude, Cursor rules and Codex; AGENTS.md keeps its own text; re-running changes nothing', () => {
    const project = scratch();
    writeFileSync(join(project, 'AGENTS.md'), '# My project\n\nRun make test.\n');
    const r = sflow(['skill', '--target', 'all'], { cwd: project, env: { HOME: scratch() } });
    expect(r.code, r.stderr).toBe(0);
    for (const f of [
      '.claude/skills/sflow-triage/SKILL.md',
      '.cursor/rules/sflow-recipes.mdc',
      '.cursor/rules/sflow-triage.mdc',
      '.cursor/rules/sflow-schema-reference.mdc',
      '.agents/skills/sflow-recipes/schema-reference.md',
    ])
      expect(existsSync(join(project, f)), f).toBe(true);
    const mdc = readFileSync(join(project, '.cursor/rules/sflow-triage.mdc'), 'utf8');
    expect(mdc).toMatch(/^---\ndescription: .+\nglobs:\nalwaysApply: false\n---\n/);
    const agents = readFileSync(join(project, 'AGENTS.md'), 'utf8');
    expect(agents.startsWith('# My project\n\nRun make test.\n')).toBe(true);
    expect(agents).toContain('`sflow-triage`');
    const again = sflow(['skill', '--target', 'codex'], { cwd: project });
    expect(again.stdout).not.toContain('✓ AGENTS.md');
    expect(readFileSync(join(project, 'AGENTS.md'), 'utf8')).toBe(agents);
  });

  it('Cursor --global is refused with a hint; a changed skill file is kept without --force', () => {
    const project = scratch();
    const c = sflow(['skill', '--target', 'cursor', '--global'], { cwd: project, env: { HOME: scratch() } });
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('--global cannot install for Cursor');
    sflow(['skill', '--target', 'claude'], { cwd: project });
    const f = join(project, '.claude/skills/sflow-triage/SKILL.md');
    writeFileSync(f, 'my edits');
    expect(sflow(['skill', '--target', 'claude'], { cwd: project }).stdout).toContain('kept');
    expect(readFileSync(f, 'utf8')).toBe('my edits');
    sflow(['skill', '--target', 'claude', '--force'], { cwd: project });
    expect(readFileSync(f, 'utf8')).toContain('name: sflow-triage');
    const list = sflow(['skill', '--list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('sflow-recipes');
  });
});

function readdirNames(d: string): string[] {
  return spawnSync('ls', ['-A', d], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
}

describe('sflow upgrade --dry-run', () => {
  it('refuses a source checkout, and with --force prints the global npm command', () => {
    const r = sflow(['upgrade', '--dry-run']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('source checkout');
    expect(r.stderr).toContain('--force');
    const f = sflow(['update', '--dry-run', '--force', '--sflow-version', '1.2.3']);
    expect(f.code, f.stderr).toBe(0);
    expect(f.stdout).toContain('would run: npm install --global sflow-cli@1.2.3');
    expect(f.stdout).not.toMatch(/ sflow@/);
  });

  it("refuses while npm's global `sflow` command belongs to another package, and names it", () => {
    // a global prefix where `sflow` is the command of a package called sflow (this tool's old name)
    const prefix = scratch();
    const other = join(prefix, 'lib', 'node_modules', 'sflow');
    mkdirSync(join(other, 'bin'), { recursive: true });
    writeFileSync(join(other, 'package.json'), '{"name":"sflow","version":"0.0.9","bin":"bin/cli.js"}');
    writeFileSync(join(other, 'bin', 'cli.js'), '#!/bin/sh\n');
    mkdirSync(join(prefix, 'bin'));
    symlinkSync('../lib/node_modules/sflow/bin/cli.js', join(prefix, 'bin', 'sflow'));
    const r = sflow(['upgrade', '--dry-run', '--force'], { env: { npm_config_prefix: prefix } });
    expect(r.code, r.stdout).toBe(1);
    expect(r.stderr).toContain(
      `the global \`sflow\` command ${join(prefix, 'bin', 'sflow')} belongs to the npm package 'sflow'`,
    );
    expect(r.stderr).toContain('npm uninstall --global sflow');
    expect(r.stdout).not.toContain('would run');
  });

  it('from a project’s node_modules: npm install --prefix <project>; --branch builds a git spec', () => {
    const project = scratch();
    const pkg = join(project, 'node_modules', 'sflow-cli');
    mkdirSync(join(pkg, 'dist'), { recursive: true });
    for (const p of ['bin', 'assets', 'package.json'])
      cpSync(join(REPO, p), join(pkg, p), { recursive: true });
    cpSync(join(REPO, 'dist', 'bundle'), join(pkg, 'dist', 'bundle'), { recursive: true });
    const bin = join(pkg, 'bin', 'sflow.js');
    const run = (args: string[]) =>
      spawnSync(process.execPath, [bin, ...args], { cwd: project, encoding: 'utf8', timeout: 60_000 });
    const latest = run(['upgrade', '--dry-run']);
    expect(latest.status, latest.stderr).toBe(0);
    expect(latest.stdout).toContain(`would run: npm install --prefix ${project} sflow-cli@latest`);
    const branch = run([
      'upgrade',
      '--dry-run',
      '--branch',
      'dev',
      '--repo',
      'https://example.invalid/sflow.git',
    ]);
    expect(branch.stdout).toContain(
      'would run: npm install --prefix ' + project + ' git+https://example.invalid/sflow.git#dev',
    );
    const both = run(['upgrade', '--dry-run', '--branch', 'dev', '--sflow-version', '1.0.0']);
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('cannot be used together');
    // nv-sflow's flags: a private index, a local checkout
    const index = run(['upgrade', '--dry-run', '--sflow-index-url', 'https://npm.example.invalid/']);
    expect(index.status, index.stderr).toBe(0);
    expect(index.stdout).toContain(
      `would run: npm install --prefix ${project} --registry https://npm.example.invalid/ sflow-cli@latest`,
    );
    const source = run(['upgrade', '--dry-run', '--sflow-source-path', REPO]);
    expect(source.status, source.stderr).toBe(0);
    expect(source.stdout).toContain(`would run: npm install --prefix ${project} ${REPO}`);
  });
});

describe('sflow completion', () => {
  it('bash: completes commands, option values, recipe files and sample names', () => {
    const dir = scratch();
    const script = sflow(['completion', 'bash']).stdout;
    writeFileSync(join(dir, 'c.bash'), script);
    writeFileSync(join(dir, 'r.yaml'), '');
    writeFileSync(join(dir, 'notes.txt'), '');
    const ask = (words: string[]) =>
      spawnSync(
        'bash',
        [
          '-c',
          `source c.bash; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _sflow; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { cwd: dir, encoding: 'utf8' },
      ).stdout.trim();
    expect(ask(['sflow', 'sa'])).toBe('sample');
    expect(ask(['sflow', 'run', '--log-level', 'w'])).toBe('warning');
    expect(ask(['sflow', 'run', '-f', ''])).toBe('r.yaml');
    expect(ask(['sflow', 'run', '--dry'])).toBe('--dry-run');
    expect(ask(['sflow', 'sample', 'self_contained/local/d'])).toBe('self_contained/local/dag');
    expect(ask(['sflow', 'completion', 'z'])).toBe('zsh');
  });

  withShell('zsh', 'zsh: the script parses (zsh -n) and declares every command', () => {
    const dir = scratch();
    const script = sflow(['completion', 'zsh']).stdout;
    writeFileSync(join(dir, '_sflow'), script);
    expect(spawnSync('zsh', ['-n', join(dir, '_sflow')]).status).toBe(0);
    expect(script.startsWith('#compdef sflow\n')).toBe(true);
    for (const c of [
      'run',
      'compose',
      'visualize',
      'schema',
      'sample',
      'skill',
      'upgrade',
      'update',
      'completion',
    ])
      expect(script).toContain(`'${c}:`);
  });

  withShell('fish', 'fish: completes like bash', () => {
    const dir = scratch();
    writeFileSync(join(dir, 'sflow.fish'), sflow(['completion', 'fish']).stdout);
    const r = spawnSync(
      'fish',
      ['-c', `source sflow.fish; complete -C 'sflow run --log-level w'; complete -C 'sflow sa'`],
      {
        cwd: dir,
        encoding: 'utf8',
      },
    );
    expect(r.stdout).toMatch(/^warning\t/m);
    expect(r.stdout).toMatch(/^sample\t/m);
  });

  it('an unknown shell is a usage error', () => {
    const r = sflow(['completion', 'tcsh']);
    expect(r.code).toBe(2);
  });
});
