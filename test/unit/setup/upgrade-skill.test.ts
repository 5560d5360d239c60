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
