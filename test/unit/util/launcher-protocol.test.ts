/**
 * The driver ↔ launcher wire format (src/util/launcher/protocol.ts) read field by field, without a
 * launcher: the launch frame (byte-length prefix, NUL-separated fields, grace rounded and never
 * negative, unset variables left out, a NUL refused before anything is sent), the reply lines and
 * the errno names; and SFLOW_LAUNCHER as the client reads it. test/integration/launcher.test.ts runs
 * the same format end to end against both launchers.
 */
import { describe, expect, it } from 'vitest';
import { encodeLaunch, errnoInfo, FrameError, parseReply } from '../../../src/util/launcher/protocol.js';
import { launcherKind } from '../../../src/util/launcher/client.js';

/** the frame's declared length and its fields */
function decode(frame: Buffer): { length: number; fields: string[]; bodyBytes: number } {
  const nl = frame.indexOf(10);
  const body = frame.subarray(nl + 1);
  return {
    length: Number(frame.subarray(0, nl).toString('latin1')),
    fields: body.toString('utf8').split('\0'),
    bodyBytes: body.length,
  };
}

const base = {
  id: 7,
  argv: ['bash', '-c', 'echo hi'],
  cwd: '/w',
  env: {},
  logPath: '/w/t.log',
  graceMs: 1500,
};

describe('a launch frame', () => {
  it('is the body’s byte length, a newline, then L, id, cwd, log, grace, argc, argv, KEY=value', () => {
    const f = decode(encodeLaunch({ ...base, env: { A: '1', B: 'x=y' } }));
    expect(f.fields).toEqual([
      'L',
      '7',
      '/w',
      '/w/t.log',
      '1500',
      '3',
      'bash',
      '-c',
      'echo hi',
      'A=1',
      'B=x=y',
    ]);
    expect(f.length).toBe(f.bodyBytes);
  });

  it('counts bytes, not characters, in its length', () => {
    const f = decode(encodeLaunch({ ...base, argv: ['échö ✓'] }));
    expect(f.fields.slice(5)).toEqual(['1', 'échö ✓']);
    expect(f.length).toBe(f.bodyBytes);
    expect(f.length).toBeGreaterThan(f.fields.join('\0').length);
  });

  it('leaves out variables that are unset, keeps empty ones', () => {
    const f = decode(encodeLaunch({ ...base, argv: [], env: { GONE: undefined, EMPTY: '' } }));
    expect(f.fields).toEqual(['L', '7', '/w', '/w/t.log', '1500', '0', 'EMPTY=']);
  });

  it('sends the grace in whole milliseconds, never below 0', () => {
    expect(decode(encodeLaunch({ ...base, graceMs: 1499.6 })).fields[4]).toBe('1500');
    expect(decode(encodeLaunch({ ...base, graceMs: -5 })).fields[4]).toBe('0');
  });

  it('refuses a NUL byte in any field, naming the field', () => {
    const nul = (over: Partial<typeof base> & { env?: NodeJS.ProcessEnv }) => () =>
      encodeLaunch({ ...base, ...over });
    expect(nul({ cwd: '/a\0b' })).toThrow(new FrameError('working directory contains a NUL byte'));
    expect(nul({ logPath: '/a\0b' })).toThrow('log path contains a NUL byte');
    expect(nul({ argv: ['ok', 'a\0b'] })).toThrow('argument contains a NUL byte');
    expect(nul({ env: { K: 'a\0b' } })).toThrow('environment variable K contains a NUL byte');
    expect(nul({ cwd: '/a\0b' })).toThrow(FrameError);
  });
});

describe('a reply line', () => {
  it('ready, with the launcher’s protocol version', () => {
    expect(parseReply('R 2')).toEqual({ kind: 'ready', version: 2 });
  });

  it('started: id, pid and the start time, or null when it is - or missing', () => {
    expect(parseReply('S 3 4242 987654')).toEqual({ kind: 'started', id: 3, pid: 4242, startTime: 987654 });
    expect(parseReply('S 3 4242 -')).toEqual({ kind: 'started', id: 3, pid: 4242, startTime: null });
    expect(parseReply('S 3 4242')).toEqual({ kind: 'started', id: 3, pid: 4242, startTime: null });
  });

  it('failed: id and errno', () => {
    expect(parseReply('E 5 2')).toEqual({ kind: 'failed', id: 5, errno: 2 });
  });

  it('exited: an exit code, or a signal (by name) and no code', () => {
    expect(parseReply('X 4242 3 0')).toEqual({ kind: 'exited', pid: 4242, code: 3, signal: null });
    expect(parseReply('X 4242 0 9')).toEqual({ kind: 'exited', pid: 4242, code: null, signal: 'SIGKILL' });
    expect(parseReply('X 4242 0 15')).toEqual({ kind: 'exited', pid: 4242, code: null, signal: 'SIGTERM' });
    // a signal number this system does not name: still no exit code
    expect(parseReply('X 4242 0 200')).toEqual({ kind: 'exited', pid: 4242, code: null, signal: null });
  });

  it('anything else is not a reply', () => {
    expect(parseReply('')).toBeUndefined();
    expect(parseReply('hello world')).toBeUndefined();
    expect(parseReply('r 2')).toBeUndefined();
  });
});

describe('an errno', () => {
  it('is named as Node names it, whatever its sign', () => {
    expect(errnoInfo(2)).toEqual({ code: 'ENOENT', message: 'no such file or directory' });
    expect(errnoInfo(-13)).toEqual({ code: 'EACCES', message: 'permission denied' });
  });

  it('that Node does not know keeps its number', () => {
    expect(errnoInfo(99999)).toEqual({ code: 'E99999', message: 'error 99999' });
  });
});

describe('SFLOW_LAUNCHER', () => {
  it('names perl, node or inline in any case; anything else is the default order', () => {
    expect(launcherKind({ SFLOW_LAUNCHER: 'perl' })).toBe('perl');
    expect(launcherKind({ SFLOW_LAUNCHER: 'Node' })).toBe('node');
    expect(launcherKind({ SFLOW_LAUNCHER: 'INLINE' })).toBe('inline');
    expect(launcherKind({ SFLOW_LAUNCHER: 'python' })).toBe('auto');
    expect(launcherKind({})).toBe('auto');
  });
});
