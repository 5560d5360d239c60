/**
 * Every test and source file is something git tracks: a .gitignore pattern that matches a folder
 * of tests hides it from every clone, and the suite that needs it then finds no test files in CI
 * (a bare `release/` pattern once hid test/release/). Skips outside a git checkout.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO as ROOT } from '../../helpers/cli.js';

const git = (args: string[], input?: string) =>
  spawnSync('git', args, { cwd: ROOT, input, encoding: 'utf8', timeout: 30_000 });
const inGit = git(['rev-parse', '--is-inside-work-tree']).stdout.trim() === 'true';

/** every folder under `dir` (relative to the repository root), `dir` included */
function folders(dir: string): string[] {
  const found = [dir];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true }))
    if (e.isDirectory() && e.name !== 'node_modules') found.push(...folders(`${dir}/${e.name}`));
  return found;
}

describe.skipIf(!inGit)('.gitignore hides no test or source file', () => {
  it('a test file in any test folder, and the folders every vitest config includes, would be tracked', () => {
    const probes = [
      ...folders('test').map((d) => `${d}/probe.test.ts`),
      ...['unit', 'integration', 'conformance', 'engines', 'release', 'mutation'].map(
        (d) => `test/${d}/probe.test.ts`,
      ),
      ...folders('src').map((d) => `${d}/probe.ts`),
      'scripts/probe.mjs',
      'bench/probe.mjs',
    ];
    const check = git(['check-ignore', '--no-index', '--verbose', '--stdin'], probes.join('\n') + '\n');
    // exit 1: none of them is ignored; 0: some are (listed with the pattern that hides them)
    expect(check.stdout).toBe('');
    expect(check.status).toBe(1);
  });

  it('the check would see an ignored file (a probe under node_modules/ is reported)', () => {
    const check = git(['check-ignore', '--no-index', 'node_modules/probe.test.ts']);
    expect(check.status).toBe(0);
  });
});
