import { describe, expect, it } from 'vitest';
import { sshFailure, type SshResult } from '../../../src/remote/ssh-call.js';
import { parseSshTarget } from '../../../src/remote/ssh-target.js';

const t = parseSshTarget('me@login');
const r = (code: number, stderr: string, timedOut = false): SshResult => ({
  code,
  signal: null,
  stdout: '',
  stderr,
  timedOut,
});

describe('ssh failures: one clear message each', () => {
  it.each([
    [
      r(255, 'ssh: connect to host login port 22: Connection refused'),
      'remote.unreachable',
      /cannot reach me@login/,
    ],
    [
      r(255, 'ssh: Could not resolve hostname login: Name or service not known'),
      'remote.unreachable',
      /cannot reach/,
    ],
    [r(255, 'me@login: Permission denied (publickey).'), 'remote.auth_refused', /refused the login/],
    [r(255, 'Host key verification failed.'), 'remote.host_key', /host key/],
    [r(1, 'cat: write error: No space left on device'), 'remote.disk_full', /remote disk is full/],
    [r(1, 'tar: x: Cannot write: Disk quota exceeded'), 'remote.disk_full', /remote disk is full/],
    [r(0, '', true), 'remote.timeout', /did not finish in time/],
    [
      r(255, 'kex_exchange_identification: read: Connection reset by peer'),
      'remote.unreachable',
      /cannot reach/,
    ],
    [r(2, 'sh: 1: oops: not found'), 'remote.command_failed', /exit 2.*oops: not found/],
  ])('%#', (res, code, msg) => {
    const e = sshFailure(t, res, 'the check');
    expect(e.code).toBe(code);
    expect(e.message).toMatch(msg);
    expect(e.exitCode).toBe(1);
  });

  it('auth failures carry the ControlMaster advice', () => {
    expect(sshFailure(t, r(255, 'Permission denied (publickey)'), 'x').hint).toMatch(/ControlMaster/);
  });
});
