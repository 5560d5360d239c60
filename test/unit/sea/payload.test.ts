import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packPayload, unpackPayload } from '../../../src/sea/payload.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-payload-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('single-executable payload', () => {
  it('unpacks every file with its bytes and mode', () => {
    const files = [
      { path: 'package.json', data: Buffer.from('{"name":"sflow"}'), mode: 0o644 },
      { path: 'assets/sh/monitor-collector.sh', data: Buffer.from('#!/bin/sh\n'), mode: 0o755 },
      { path: 'node_modules/x/empty', data: Buffer.alloc(0), mode: 0o600 },
    ];
    expect(unpackPayload(new Uint8Array(packPayload(files)), dir)).toBe(3);
    for (const f of files) {
      expect(readFileSync(join(dir, f.path))).toEqual(f.data);
      expect(statSync(join(dir, f.path)).mode & 0o777).toBe(f.mode);
    }
  });

  it('refuses paths that leave the folder', () => {
    const bad = packPayload([{ path: '../evil', data: Buffer.from('x'), mode: 0o644 }]);
    expect(() => unpackPayload(new Uint8Array(bad), dir)).toThrow(/bad payload path/);
  });
});
