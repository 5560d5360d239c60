/**
 * One bounded `ssh` call. Each runs in its own process group (a Ctrl-C in the terminal reaches
 * sflow, which decides what to stop, not ssh), is killed at its deadline, and its failure is
 * classified into one clear message: host unreachable, authentication refused, host key, remote
 * disk full, or ssh's own words.
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { SflowError } from '../util/sflow-error.js';
import { sshArgs, type SshTarget } from './ssh-target.js';

export interface SshCallOptions {
  /** deadline for the whole call; 0 = none (only the follow, which has keep-alives) */
  timeoutMs: number;
  /** what the remote command reads on stdin */
  input?: Buffer | string | Readable;
  /** where stdout goes; collected as text when absent */
  stdout?: Writable;
  /** stderr lines as they come (default: collected only) */
  onStderr?: (chunk: string) => void;
  tty?: boolean;
  /** what the call does, for messages ("copy sflow to the remote") */
  what: string;
}

export interface SshResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

const live = new Set<import('node:child_process').ChildProcess>();

/** Kill every ssh call still running (Ctrl-C, exit). */
export function killAllSsh(signal: NodeJS.Signals = 'SIGTERM'): void {
  for (const c of live) {
    try {
      if (c.pid) process.kill(-c.pid, signal);
    } catch {
      /* gone */
    }
  }
}

export function sshCall(t: SshTarget, command: string, o: SshCallOptions): Promise<SshResult> {
  const bin = process.env.SFLOW_SSH_BIN || 'ssh';
  const child = spawn(bin, sshArgs(t, command, { tty: o.tty }), {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  live.add(child);
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  if (o.stdout) child.stdout.pipe(o.stdout, { end: false });
  else child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => {
    const s = d.toString('utf8');
    if (stderr.length < 64 * 1024) stderr += s;
    o.onStderr?.(s);
  });
  child.stdin.on('error', () => undefined); // the remote side may close early; its exit tells why
  if (o.input === undefined) child.stdin.end();
  else if (typeof o.input === 'string' || Buffer.isBuffer(o.input)) child.stdin.end(o.input);
  else o.input.pipe(child.stdin);
  let timer: NodeJS.Timeout | undefined;
  let killer: NodeJS.Timeout | undefined;
  if (o.timeoutMs > 0)
    timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* gone */
      }
      killer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      }, 3000);
    }, o.timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', (e: NodeJS.ErrnoException) => {
      live.delete(child);
      clearTimeout(timer);
      clearTimeout(killer);
      reject(
        new SflowError('remote.no_ssh', `cannot start ${bin}: ${e.message}`, {
          phase: 'preflight',
          hint: 'install the OpenSSH client (ssh) on this machine',
        }),
      );
    });
    child.on('close', (code, signal) => {
      live.delete(child);
      clearTimeout(timer);
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

const CONTROL_MASTER_HINT =
  "sflow calls ssh with BatchMode=yes (no prompts): load your key (ssh-add, or -i KEY in --ssh); for MFA open a shared connection first: ssh -o ControlMaster=auto -o ControlPath=~/.ssh/cm-%C -o ControlPersist=30m HOST true, then pass --ssh 'HOST -o ControlPath=~/.ssh/cm-%C'";

/** The last meaningful line ssh (or the remote command) wrote on stderr. */
function lastLine(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !/^Warning: Permanently added/.test(l));
  return lines[lines.length - 1] ?? '';
}

/** The one clear error for a failed call; `undefined` when it did not fail at the SSH level. */
export function sshFailure(t: SshTarget, r: SshResult, what: string): SflowError {
  const line = lastLine(r.stderr);
  const mk = (code: string, message: string, hint?: string) =>
    new SflowError(code, message, { phase: 'preflight', hint });
  if (r.timedOut)
    return mk(
      'remote.timeout',
      `${what} on ${t.destination} did not finish in time${line ? ` (${line})` : ''}`,
      'the connection or the remote host is too slow or hangs; try again, or check the host',
    );
  if (/No space left on device|Disk quota exceeded/i.test(r.stderr))
    return mk(
      'remote.disk_full',
      `${what} on ${t.destination} failed: the remote disk is full (${line})`,
      'free space on the remote, or point --ssh-remote-root at a filesystem with room',
    );
  if (r.code === 255) {
    if (
      /Connection refused|timed out|No route to host|Could not resolve hostname|Network is unreachable|Name or service not known|Connection reset|Connection closed by/i.test(
        line,
      )
    )
      return mk(
        'remote.unreachable',
        `cannot reach ${t.destination}: ${line}`,
        'check the host name and port (-p in --ssh), your network or VPN, and that sshd runs there',
      );
    if (
      /Permission denied|Too many authentication failures|Authentication failed|no more authentication methods/i.test(
        line,
      )
    )
      return mk('remote.auth_refused', `${t.destination} refused the login: ${line}`, CONTROL_MASTER_HINT);
    if (/Host key verification failed|HOST IDENTIFICATION HAS CHANGED|host key/i.test(r.stderr))
      return mk(
        'remote.host_key',
        `the host key of ${t.destination} could not be verified: ${line}`,
        'connect once with plain ssh to check and accept the host key (known_hosts)',
      );
    return mk(
      'remote.ssh_failed',
      `ssh to ${t.destination} failed: ${line || 'exit 255'}`,
      CONTROL_MASTER_HINT,
    );
  }
  return mk(
    'remote.command_failed',
    `${what} on ${t.destination} failed (exit ${r.code ?? r.signal})${line ? `: ${line}` : ''}`,
  );
}

/** sshCall that throws the classified error unless the remote command exited 0. */
export async function sshOk(t: SshTarget, command: string, o: SshCallOptions): Promise<SshResult> {
  const r = await sshCall(t, command, o);
  if (r.code !== 0 || r.timedOut) throw sshFailure(t, r, o.what);
  return r;
}
