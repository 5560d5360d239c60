import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { globalCommand, planUpgrade, registryArgs, type InstallFacts } from '../../../src/cli/upgrade.js';
import { PACKAGE_NAME } from '../../../src/util/package-name.js';
import { scratchDir } from '../../helpers/scratch.js';
import { BLOCK_BEGIN, BLOCK_END, mergeManagedBlock } from '../../../src/skills/install-plan.js';
import { typeLabel } from '../../../src/skills/schema-reference.js';

const facts = (over: Partial<InstallFacts>): InstallFacts => ({
  packageRoot: '/usr/lib/node_modules/sflow-cli',
  realRoot: '/usr/lib/node_modules/sflow-cli',
  globalRoot: '/usr/lib/node_modules',
  name: 'sflow-cli',
  version: '0.1.0',
  gitCheckout: false,
  ...over,
});

describe('planUpgrade', () => {
  it('a global install upgrades globally, to the latest release or the one asked for', () => {
    expect(planUpgrade(facts({}), {}).argv).toEqual(['npm', 'install', '--global', 'sflow-cli@latest']);
    expect(planUpgrade(facts({}), { sflowVersion: '0.2.0', registry: 'https://r.example' }).argv).toEqual([
      'npm',
      'install',
      '--global',
      '--registry',
      'https://r.example',
      'sflow-cli@0.2.0',
    ]);
  });

  it('a project install upgrades that project; --branch uses the recorded repository', () => {
    const p = planUpgrade(
      facts({
        packageRoot: '/home/u/proj/node_modules/sflow-cli',
        realRoot: '/home/u/proj/node_modules/sflow-cli',
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
      `${PACKAGE_NAME}@latest`,
    ]);
    // a scoped package takes only its own scope from the index
    expect(registryArgs('@corp/sflow', { sflowIndexUrl: url })).toEqual([`--@corp:registry=${url}`]);
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
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: PACKAGE_NAME }));
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
        new RegExp(`holds the package 'left-pad', not '${PACKAGE_NAME}'`),
      );
      expect(() => planUpgrade(facts({}), { sflowSourcePath: join(dir, 'nope') })).toThrow(/no package.json/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an npm-linked checkout is refused unless --force', () => {
    const linked = facts({ realRoot: '/home/u/src/sflow' });
    expect(() => planUpgrade(linked, {})).toThrow(/linked checkout/);
    expect(planUpgrade(linked, { force: true }).argv.at(-1)).toBe('sflow-cli@latest');
  });

  it('installs only this package, whatever the running copy is called', () => {
    expect(PACKAGE_NAME).toBe('sflow-cli');
    // an install of this tool under its old name: the upgrade moves it to this package's name
    const old = facts({
      packageRoot: '/home/u/p/node_modules/sflow',
      realRoot: '/home/u/p/node_modules/sflow',
      name: 'sflow',
    });
    expect(planUpgrade(old, { sflowVersion: '0.2.0' }).argv).toEqual([
      'npm',
      'install',
      '--prefix',
      '/home/u/p',
      'sflow-cli@0.2.0',
    ]);
  });

  it("refuses a global upgrade while the global `sflow` command is another package's (even with --force)", () => {
    const mine = {
      path: '/usr/bin/sflow',
      owner: 'sflow-cli',
      target: '/usr/lib/node_modules/sflow-cli/bin/sflow.js',
    };
    expect(planUpgrade(facts({ globalCommand: mine }), {}).argv.at(-1)).toBe('sflow-cli@latest');
    const other = {
      path: '/usr/bin/sflow',
      owner: 'sflow',
      target: '/usr/lib/node_modules/sflow/bin/sflow.js',
    };
    for (const force of [false, true])
      expect(() => planUpgrade(facts({ globalCommand: other }), { force })).toThrow(
        "the global `sflow` command /usr/bin/sflow belongs to the npm package 'sflow' (/usr/lib/node_modules/sflow/bin/sflow.js), not to sflow-cli",
      );
    expect(() => planUpgrade(facts({ globalCommand: { path: '/usr/bin/sflow' } }), {})).toThrow(
      'is not a command of an npm package',
    );
    // a project install does not touch the global command
    const project = facts({
      packageRoot: '/p/node_modules/sflow-cli',
      realRoot: '/p/node_modules/sflow-cli',
      globalCommand: other,
    });
    expect(planUpgrade(project, {}).argv.at(-1)).toBe('sflow-cli@latest');
  });
});

describe('globalCommand', () => {
  it('names the package whose package.json is above where <prefix>/bin/sflow leads', () => {
    const prefix = scratchDir('sflow-upgrade-');
    const root = join(prefix, 'lib', 'node_modules');
    expect(globalCommand(root)).toBeUndefined();
    mkdirSync(join(root, 'sflow', 'bin'), { recursive: true });
    writeFileSync(join(root, 'sflow', 'package.json'), '{"name":"sflow","version":"1.28.2"}');
    writeFileSync(join(root, 'sflow', 'bin', 'cli.js'), '');
    mkdirSync(join(prefix, 'bin'));
    symlinkSync('../lib/node_modules/sflow/bin/cli.js', join(prefix, 'bin', 'sflow'));
    expect(globalCommand(root)).toEqual({
      path: join(prefix, 'bin', 'sflow'),
      target: realpathSync(join(root, 'sflow', 'bin', 'cli.js')),
      owner: 'sflow',
    });
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
