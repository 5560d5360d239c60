/**
 * A ledger line is whole or not at all: on a 64 KiB tmpfs (root; mounted by the test) a record
 * that does not fit is written short by the kernel, then fails with ENOSPC; the partial bytes are
 * cut again, so once there is room the next record starts on a fresh line. Without a mount (not
 * root), /dev/full shows the error passes through.
 */
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendWholeLine } from '../../src/util/whole-line.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-wholeline-'));
const mnt = join(dir, 'mnt');
mkdirSync(mnt);
const mounted =
  process.getuid?.() === 0 &&
  spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt], { stdio: 'ignore' }).status === 0;
afterAll(() => {
  if (mounted) spawnSync('umount', [mnt], { stdio: 'ignore' });
  rmSync(dir, { recursive: true, force: true });
});

describe('appendWholeLine', () => {
  it.runIf(mounted)('a record cut by a full disk is removed again; the next one starts a fresh line', () => {
    const ledger = join(mnt, 'events.jsonl');
    const fd = openSync(ledger, 'a');
    try {
      appendWholeLine(fd, JSON.stringify({ n: 1 }));
      writeFileSync(join(mnt, 'fill'), Buffer.alloc(64 * 1024 - 4096 - 200)); // room for less than the next record
      const big = JSON.stringify({ n: 2, pad: 'x'.repeat(8192) });
      expect(() => appendWholeLine(fd, big)).toThrow(/ENOSPC/);
      expect(readFileSync(ledger, 'utf8')).toBe('{"n":1}\n');
      unlinkSync(join(mnt, 'fill'));
      appendWholeLine(fd, JSON.stringify({ n: 3 }));
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(ledger, 'utf8')).toBe('{"n":1}\n{"n":3}\n');
  });

  it('an error of the device passes through', () => {
    const fd = openSync('/dev/full', 'w');
    try {
      expect(() => appendWholeLine(fd, '{"n":1}')).toThrow(/ENOSPC/);
    } finally {
      closeSync(fd);
    }
  });
});
