/**
 * Which registry directories are trusted (src/gpu/registry-dir.ts): the owner of the directory,
 * every directory above it both as written and as the real path it resolves to, symbolic links on
 * the way, and a registry that cannot be created or inspected. The owner tests chown, so they need
 * root (as in CI); they pose as an unprivileged user by stubbing `process.getuid`.
 */
import { chmodSync, chownSync, lchownSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { checkRegistryDir, openRegistryDir } from '../../../src/gpu/registry-dir.js';
import { SflowError } from '../../../src/config/errors.js';
import { tempDir } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => {
  vi.restoreAllMocks();
  cleanup();
});

const asRoot = process.getuid?.() === 0;

function refusal(f: () => unknown): SflowError {
  try {
    f();
  } catch (e) {
    if (e instanceof SflowError) return e;
    throw e;
  }
  throw new Error('expected an SflowError');
}

/** a directory in the scratch folder owned by `uid` */
function owned(name: string, uid: number): string {
  const d = path.join(dir, name);
  mkdirSync(d, { mode: 0o700 });
  chownSync(d, uid, uid);
  return d;
}

describe.skipIf(!asRoot)('the owner of the registry (as uid 1000)', () => {
  beforeEach(() => vi.spyOn(process, 'getuid').mockReturnValue(1000));

  it('trusts a directory of its own or of root', () => {
    expect(() => checkRegistryDir(owned('mine', 1000))).not.toThrow();
    expect(() => checkRegistryDir(owned('roots', 0))).not.toThrow();
  });

  it("refuses another user's directory", () => {
    const d = owned('theirs', 2000);
    const e = refusal(() => checkRegistryDir(d));
    expect(e.code).toBe('GPU_REGISTRY_UNSAFE');
    expect(e.message).toBe(
      `GPU reservation registry ${d} is not safe to use: it is owned by another user (uid 2000), who could ` +
        'delete or replace its records',
    );
  });

  it('checks no owner where the platform has no uids', () => {
    const d = owned('theirs', 2000);
    vi.spyOn(process, 'getuid').mockRestore();
    const getuid = process.getuid;
    Object.defineProperty(process, 'getuid', { value: undefined, configurable: true, writable: true });
    try {
      expect(() => checkRegistryDir(d)).not.toThrow();
    } finally {
      Object.defineProperty(process, 'getuid', { value: getuid, configurable: true, writable: true });
    }
  });
});

describe('the directories above the registry', () => {
  function open(name: string): string {
    const d = path.join(dir, name);
    mkdirSync(d);
    chmodSync(d, 0o777);
    return d;
  }

  it('refuses a registry anywhere below a directory others may write without the sticky bit', () => {
    const o = open('open');
    const e = refusal(() => openRegistryDir(path.join(o, 'mid', 'reg')));
    expect(e.message).toContain(`the directory above it, ${o}, is writable by other users (mode 0777)`);
  });

  it('checks the real path of a registry reached through a symbolic link', () => {
    const o = open('open');
    mkdirSync(path.join(o, 'real'));
    mkdirSync(path.join(dir, 'safe'), { mode: 0o700 });
    symlinkSync(path.join(o, 'real'), path.join(dir, 'safe', 'link'));
    const e = refusal(() => openRegistryDir(path.join(dir, 'safe', 'link', 'reg')));
    expect(e.message).toContain(`the directory above it, ${o}, is writable by other users`);
  });

  it('checks the real directory a symbolic link parent stands for', () => {
    const o = open('open');
    symlinkSync(o, path.join(dir, 'link'));
    const e = refusal(() => openRegistryDir(path.join(dir, 'link', 'reg')));
    expect(e.message).toContain(`the directory above it, ${o}, is writable by other users`);
  });

  it.skipIf(!asRoot)('refuses a symbolic link on the way that another user owns', () => {
    mkdirSync(path.join(dir, 'target'), { mode: 0o700 });
    const link = path.join(dir, 'link');
    symlinkSync(path.join(dir, 'target'), link);
    lchownSync(link, 2000, 2000);
    const e = refusal(() => openRegistryDir(path.join(link, 'reg')));
    expect(e.message).toContain(
      `is not safe to use: the symbolic link above it, ${link}, is owned by another user (uid 2000)`,
    );
  });

  it('names the registry itself as "it"', () => {
    const o = open('open');
    expect(refusal(() => checkRegistryDir(o)).message).toContain(
      `${o} is not safe to use: it is writable by other users (mode 0777) without the sticky bit`,
    );
  });
});

describe('a registry that cannot be made or looked at', () => {
  it('says it cannot be created when a parent is a file', () => {
    writeFileSync(path.join(dir, 'file'), '');
    const reg = path.join(dir, 'file', 'sub', 'reg');
    const e = refusal(() => openRegistryDir(reg));
    expect(e.code).toBe('GPU_REGISTRY_UNSAFE');
    expect(e.message).toBe(`cannot create GPU reservation registry ${reg}: ENOTDIR`);
    expect(e.phase).toBe('run');
    expect(e.hint).toContain('SFLOW_GPU_RESERVATION_DIR');
  });

  it('says it cannot be inspected when its path runs through a file', () => {
    writeFileSync(path.join(dir, 'file'), '');
    const reg = path.join(dir, 'file', 'reg');
    const e = refusal(() => openRegistryDir(reg));
    expect(e.code).toBe('GPU_REGISTRY_UNSAFE');
    expect(e.message).toBe(`GPU reservation registry ${reg} is not safe to use: cannot inspect it (ENOTDIR)`);
  });
});
