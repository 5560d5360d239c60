import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planUpgrade, type InstallFacts } from '../../../src/cli/upgrade.js';
import { BLOCK_BEGIN, BLOCK_END, mergeManagedBlock } from '../../../src/skills/install-plan.js';
import { typeLabel } from '../../../src/skills/schema-reference.js';

const facts = (over: Partial<InstallFacts>): InstallFacts => ({
  packageRoot: '/usr/lib/node_modules/sflow',
  realRoot: '/usr/lib/node_modules/sflow',
  globalRoot: '/usr/lib/node_modules',
  name: 'sflow',
  version: '0.1.0',
  gitCheckout: false,
  ...over,
});

describe('planUpgrade', () => {
  it('a global install upgrades globally, to the latest release or the one asked for', () => {
    expect(planUpgrade(facts({}), {}).argv).toEqual(['npm', 'install', '--global', 'sflow@latest']);
    expect(planUpgrade(facts({}), { sflowVersion: '0.2.0', registry: 'https://r.example' }).argv).toEqual([
      'npm',
      'install',
      '--global',
      '--registry',
      'https://r.example',
      'sflow@0.2.0',
    ]);
  });

  it('a project install upgrades that project; --branch uses the recorded repository', () => {
    const p = planUpgrade(
      facts({
        packageRoot: '/home/u/proj/node_modules/sflow',
        realRoot: '/home/u/proj/node_modules/sflow',
        repository: 'git+https://git.example/org/sflow.git',
      }),
      { branch: 'v0.3' },
    );
    expect(p.argv).toEqual([
      'npm',
      'install',
      '--prefix',
      '/home/u/proj',
      'git+https://git.example/org/sflow.git#v0.3',
    ]);
    expect(() => planUpgrade(facts({}), { branch: 'x', sflowVersion: '1' })).toThrow(/together/);
  });

  it("--sflow-index-url (nv-sflow's private index): a scope registry for a scoped package, else --registry", () => {
    const url = 'https://npm.corp.example/';
    expect(planUpgrade(facts({}), { sflowIndexUrl: url }).argv).toEqual([
      'npm',
      'install',
      '--global',
      '--registry',
      url,
      'sflow@latest',
    ]);
    const scoped = planUpgrade(facts({ name: '@corp/sflow' }), { sflowIndexUrl: url, sflowVersion: '2.0.0' });
    expect(scoped.argv).toEqual([
      'npm',
      'install',
      '--global',
      `--@corp:registry=${url}`,
      '@corp/sflow@2.0.0',
    ]);
    expect(() => planUpgrade(facts({}), { sflowIndexUrl: url, registry: url })).toThrow(/together/);
    // credentials in the URL would show in ps and in the printed command
    expect(() => planUpgrade(facts({}), { sflowIndexUrl: 'https://me:t0ken@npm.corp.example/' })).toThrow(
      /carries credentials/,
    );
    expect(() => planUpgrade(facts({}), { registry: 'https://me:t0ken@r.example/' })).toThrow(
      /carries credentials/,
    );
  });

  it('--sflow-source-path installs that checkout (npm links it); alone, and only an sflow folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sflow-src-'));
    try {
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'sflow' }));
      expect(planUpgrade(facts({}), { sflowSourcePath: dir }).argv).toEqual([
        'npm',
        'install',
        '--global',
        dir,
      ]);
      expect(() => planUpgrade(facts({}), { sflowSourcePath: dir, branch: 'x' })).toThrow(
        '--branch and --sflow-source-path cannot be used together',
      );
      expect(() => planUpgrade(facts({}), { sflowSourcePath: dir, registry: 'https://r.example' })).toThrow(
        /no registry is asked/,
      );
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'left-pad' }));
      expect(() => planUpgrade(facts({}), { sflowSourcePath: dir })).toThrow(
        /holds the package 'left-pad', not 'sflow'/,
      );
      expect(() => planUpgrade(facts({}), { sflowSourcePath: join(dir, 'nope') })).toThrow(/no package.json/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an npm-linked checkout is refused unless --force', () => {
    const linked = facts({ realRoot: '/home/u/src/sflow' });
    expect(() => planUpgrade(linked, {})).toThrow(/linked checkout/);
    expect(planUpgrade(linked, { force: true }).argv.at(-1)).toBe('sflow@latest');
  });
});

describe('AGENTS.md managed block', () => {
  const block = `${BLOCK_BEGIN}\nnew\n${BLOCK_END}\n`;
  it('is appended once and replaced in place afterwards', () => {
    const once = mergeManagedBlock('# mine\n', block);
    expect(once).toBe(`# mine\n\n${block}`);
    const edited = once.replace('new', 'old') + 'tail\n';
    expect(mergeManagedBlock(edited, block)).toBe(`# mine\n\n${block}tail\n`);
    expect(mergeManagedBlock('', block)).toBe(block);
  });
});

describe('schema reference labels', () => {
  it('names expressions, enums and lists', () => {
    expect(
      typeLabel({
        anyOf: [
          { type: 'integer', minimum: 0 },
          { type: 'string', pattern: '\\$\\{\\{' },
        ],
      }),
    ).toBe('integer (≥ 0) \\| `${{ expr }}`');
    expect(typeLabel({ enum: ['a', 'b'] })).toBe('`a` \\| `b`');
    expect(typeLabel({ type: 'array', items: { type: 'string' } })).toBe('list of string');
  });
});
