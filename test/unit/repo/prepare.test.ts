/**
 * The quick start's first `npx sflow` does not rebuild: npm runs `prepare` when npx links the
 * checkout into its cache, and scripts/prepare.mjs builds only when dist/ is missing or older than
 * its inputs. Checked on a scratch copy with a stand-in build script (the real build is slow).
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../../helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-prepare-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const FAKE_BUILD =
  "node -e \"const fs=require('fs');fs.appendFileSync('builds.txt','x');fs.mkdirSync('dist',{recursive:true});fs.writeFileSync('dist/.build-stamp','now')\"";

function scratch(): string {
  mkdirSync(join(root, 'scripts'), { recursive: true });
  copyFileSync(join(REPO, 'scripts', 'prepare.mjs'), join(root, 'scripts', 'prepare.mjs'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'x', scripts: { build: FAKE_BUILD } }));
  for (const f of ['tsconfig.json', 'tsconfig.build.json', 'scripts/bundle.mjs', 'src/a.ts']) {
    mkdirSync(join(root, f, '..'), { recursive: true });
    writeFileSync(join(root, f), '');
  }
  return root;
}

function prepare(env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, ['scripts/prepare.mjs'], {
    cwd: root,
    env: { ...process.env, npm_execpath: '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  let builds = 0;
  try {
    builds = readFileSync(join(root, 'builds.txt'), 'utf8').length;
  } catch {
    /* none yet */
  }
  return { code: r.status, stderr: r.stderr, builds };
}

describe('npm prepare', () => {
  it('is scripts/prepare.mjs', () => {
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.prepare).toBe('node scripts/prepare.mjs');
  });

  it('builds when dist/ is missing, skips when it is up to date, rebuilds after a source change', () => {
    scratch();
    expect(prepare()).toMatchObject({ code: 0, builds: 1 });
    for (const out of ['dist/cli/main.js', 'dist/bundle/main.js']) {
      mkdirSync(join(root, out, '..'), { recursive: true });
      writeFileSync(join(root, out), '');
    }
    const old = new Date(Date.now() - 60_000);
    for (const f of [
      'package.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'scripts/bundle.mjs',
      'src/a.ts',
      'src',
    ])
      utimesSync(join(root, f), old, old);
    const stamp = statSync(join(root, 'dist', '.build-stamp')).mtimeMs;
    const fresh = prepare();
    expect(fresh).toMatchObject({ code: 0, builds: 1 });
    expect(fresh.stderr).toContain('dist/ is up to date with src/, skipping the build');
    expect(statSync(join(root, 'dist', '.build-stamp')).mtimeMs).toBe(stamp);
    writeFileSync(join(root, 'src', 'a.ts'), 'changed');
    expect(prepare()).toMatchObject({ code: 0, builds: 2 });
    expect(prepare({ SFLOW_FORCE_BUILD: '1' })).toMatchObject({ code: 0, builds: 3 });
  });
});
