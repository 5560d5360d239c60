import { describe, expect, it } from 'vitest';
import { parseSshTarget, shCommand, shQuote, splitWords, sshArgs } from '../../../src/remote/ssh-target.js';
import { isSflowError } from '../../../src/config/errors.js';

function refused(text: string): string {
  try {
    parseSshTarget(text);
  } catch (e) {
    if (isSflowError(e)) {
      expect(e.exitCode).toBe(2);
      return e.message;
    }
    throw e;
  }
  throw new Error(`accepted: ${text}`);
}

describe('--ssh text', () => {
  it('splits like a shell: quotes group, backslashes escape', () => {
    expect(splitWords(`a@b -o 'ProxyCommand=ssh -W %h:%p j' -i "my key" x\\ y`)).toEqual([
      'a@b',
      '-o',
      'ProxyCommand=ssh -W %h:%p j',
      '-i',
      'my key',
      'x y',
    ]);
  });

  it('keeps OpenSSH options (also bundled and after the destination) and finds the destination', () => {
    const t = parseSshTarget('user@login -p 2222 -J bastion -C -oConnectTimeout=3');
    expect(t.destination).toBe('user@login');
    expect(t.options).toEqual(['-p', '2222', '-J', 'bastion', '-C', '-o', 'ConnectTimeout=3']);
    expect(parseSshTarget('-4C -p22 h').options).toEqual(['-4', '-C', '-p', '22']);
  });

  it('refuses -t/-T, session-changing options, a command, SetEnv and unknown flags', () => {
    expect(refused('h -t')).toMatch(/-t` inside --ssh is refused.*--ssh-tty/);
    expect(refused('h -tt')).toMatch(/-t/);
    expect(refused('h -T')).toMatch(/--ssh-tty never/);
    expect(refused('h -N')).toMatch(/-N/);
    expect(refused('h -f')).toMatch(/background/);
    expect(refused('h uptime')).toMatch(/not a command/);
    expect(refused('h -o SetEnv=TOKEN=abc')).toMatch(/secrets never go there/);
    expect(refused('h -o RequestTTY=yes')).toMatch(/--ssh-tty/);
    expect(refused('h -Z')).toMatch(/unknown ssh option -Z/);
    expect(refused('-p')).toMatch(/needs a value/);
    expect(refused('')).toMatch(/needs a destination/);
    expect(refused("h -i 'x")).toMatch(/unterminated/);
  });

  it('ssh arguments: sflow defaults unless the user set them, then -T or -tt, destination, command', () => {
    const t = parseSshTarget('h -o batchmode=no -p 2');
    const a = sshArgs(t, 'echo hi');
    expect(a.slice(-3)).toEqual(['-T', 'h', 'echo hi']);
    expect(a.join(' ')).not.toMatch(/BatchMode=yes/);
    expect(a.join(' ')).toMatch(/ConnectTimeout=15.*ServerAliveInterval=15/);
    expect(sshArgs(parseSshTarget('h'), 'x', { tty: true })).toContain('-tt');
  });

  it('quotes for any POSIX shell and keeps remote scripts on one line', () => {
    expect(shQuote('/plain/path-1.2')).toBe('/plain/path-1.2');
    expect(shQuote("it's $HOME")).toBe(`'it'\\''s $HOME'`);
    expect(shCommand('a;\n  b')).toBe(`sh -c 'a; b'`);
  });
});
