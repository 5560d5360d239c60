import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readReceipt, updateReceipt, writeReceipt, type Receipt } from '../../../src/remote/receipt.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-receipt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base: Receipt = {
  command: 'run',
  connection: 'me@login -p 22',
  remote_session: '/home/me/.sflow/remote/runs/ssh-x',
  remote_sflow: '/home/me/.sflow/remote/bin/sflow-0.1.0-abc-linux-x64',
  local_output: '/tmp/x',
  state: 'running',
  sflow_version: '0.1.0',
  created: '2026-01-01T00:00:00.000Z',
  updated: '',
};

describe('receipt.json', () => {
  it('is written with mode 0600 and read back; updates keep the rest', () => {
    const p = join(dir, 'receipt.json');
    writeReceipt(p, base);
    expect(statSync(p).mode & 0o777).toBe(0o600);
    const r = updateReceipt(p, readReceipt(p), 'completed', 0);
    expect(readReceipt(p)).toMatchObject({ ...base, state: 'completed', exit_code: 0, updated: r.updated });
  });

  it('a missing key, a relative remote_session or no JSON is a usage error naming the problem', () => {
    const bad = (name: string, content: unknown) => {
      const p = join(dir, name);
      writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
      try {
        readReceipt(p);
      } catch (e) {
        expect((e as { exitCode: number }).exitCode).toBe(2);
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(bad('a.json', { ...base, connection: '' })).toMatch(/'connection' is missing or empty/);
    expect(bad('b.json', { ...base, remote_session: 'runs/x' })).toMatch(
      /'remote_session' must be an absolute/,
    );
    expect(bad('c.json', { ...base, command: 'visualize' })).toMatch(/run, batch or compose/);
    expect(bad('d.json', '{nope')).toMatch(/not a receipt/);
    expect(() => readReceipt(join(dir, 'none.json'))).toThrow(/no such receipt/);
  });
});
