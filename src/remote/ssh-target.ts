/**
 * `--ssh '<destination> [OpenSSH options]'` (spec cli.md §9.1, §9.8): split like a shell would,
 * checked, and turned into `ssh` argument lists. The destination is the one word that is not an
 * option; options keep their meaning for OpenSSH. Refused: `-t`/`-T` (the PTY is `--ssh-tty`'s),
 * options that change what ssh does with the session (`-N -f -n -s -W -G -V -O -Q`), a remote
 * command, and `-o SetEnv=…` (values would be stored in the receipt: secrets never go there).
 */
import { SflowError } from '../util/sflow-error.js';

/** OpenSSH client options that take an argument (ssh(1)). */
const WITH_ARG = new Set('BbcDEeFIiJLlmOopQRSWw'.split(''));
/** … and that take none. */
const FLAGS = new Set('46AaCfGgKkMNnqsTtVvXxYy'.split(''));
const REFUSED: Record<string, string> = {
  t: '`-t` inside --ssh is refused: sflow decides on a remote terminal itself; use --ssh-tty always|never|auto',
  T: '`-T` inside --ssh is refused: use --ssh-tty never',
  N: '`-N` (no remote command) cannot run sflow remotely',
  f: '`-f` (ssh in the background) is refused: sflow follows the run itself',
  n: '`-n` is refused: sflow sends the recipe over the connection',
  s: '`-s` (subsystem) cannot run sflow remotely',
  W: '`-W` (stdio forwarding) cannot run sflow remotely',
  G: '`-G` only prints the configuration',
  V: '`-V` only prints the ssh version',
  O: '`-O` (control commands) is for a running master: give its ControlPath with -o instead',
  Q: '`-Q` only queries algorithms',
};

export interface SshTarget {
  /** the --ssh text exactly as given (stored in the receipt) */
  text: string;
  /** [user@]host or ssh://… */
  destination: string;
  /** the OpenSSH options, in order */
  options: string[];
}

function usage(message: string, hint?: string): SflowError {
  return new SflowError('remote.ssh_option', message, { phase: 'usage', hint, exitCode: 2 });
}

/** Shell-like word splitting: blanks separate, '…' and "…" group, \ escapes (outside '…'). */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw usage(`--ssh: unterminated ' in ${JSON.stringify(text)}`);
      cur += text.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && j + 1 < text.length && '"\\$`'.includes(text[j + 1])) j++;
        cur += text[j];
      }
      if (j >= text.length) throw usage(`--ssh: unterminated " in ${JSON.stringify(text)}`);
      i = j;
      inWord = true;
    } else if (c === '\\' && i + 1 < text.length) {
      cur += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) words.push(cur);
  return words;
}

export function parseSshTarget(text: string): SshTarget {
  const words = splitWords(text);
  const options: string[] = [];
  const positional: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (!w.startsWith('-') || w === '-') {
      positional.push(w);
      continue;
    }
    // bundled flags like -4C or -p22 / -oKey=V
    for (let k = 1; k < w.length; k++) {
      const f = w[k];
      if (REFUSED[f]) throw usage(`--ssh: ${REFUSED[f]}`);
      if (WITH_ARG.has(f)) {
        const value = k + 1 < w.length ? w.slice(k + 1) : words[++i];
        if (value === undefined) throw usage(`--ssh: option -${f} needs a value`);
        checkOption(f, value);
        options.push(`-${f}`, value);
        break;
      }
      if (!FLAGS.has(f))
        throw usage(`--ssh: unknown ssh option -${f}`, 'see ssh(1); give options as in `ssh`');
      options.push(`-${f}`);
    }
  }
  if (positional.length === 0)
    throw usage('--ssh needs a destination', "e.g. --ssh 'user@login.cluster -p 22 -i ~/.ssh/id_ed25519'");
  if (positional.length > 1)
    throw usage(
      `--ssh takes one destination and ssh options, not a command: ${JSON.stringify(positional.slice(1).join(' '))}`,
      'sflow runs its own remote command',
    );
  return { text, destination: positional[0], options };
}

function checkOption(flag: string, value: string): void {
  if (flag !== 'o') return;
  const key = value.split(/[=\s]/)[0].toLowerCase();
  if (key === 'setenv' || key === 'sendenv')
    throw usage(
      `--ssh: -o ${value.split(/[=\s]/)[0]} is refused: the --ssh text is stored in the receipt, and secrets never go there`,
      'set remote variables in the remote ~/.bashrc or in the recipe',
    );
  if (key === 'requesttty') throw usage('--ssh: -o RequestTTY is refused: use --ssh-tty');
  if (key === 'remotecommand') throw usage('--ssh: -o RemoteCommand is refused: sflow runs its own command');
}

/** Whether the user already set an `-o Key=…` (case-insensitive). */
function hasOption(t: SshTarget, key: string): boolean {
  const k = key.toLowerCase();
  for (let i = 0; i < t.options.length - 1; i++)
    if (t.options[i] === '-o' && t.options[i + 1].split(/[=\s]/)[0].toLowerCase() === k) return true;
  return false;
}

/**
 * The argument list of one ssh call: sflow's defaults (no password prompts, bounded connect,
 * keep-alives that notice a dead link) unless the user set them, the user's options, `-tt` when
 * asked, the destination and the remote command (one string, run by the remote login shell).
 */
export function sshArgs(t: SshTarget, remoteCommand: string, o: { tty?: boolean } = {}): string[] {
  const defaults: string[] = [];
  const add = (k: string, v: string) => {
    if (!hasOption(t, k)) defaults.push('-o', `${k}=${v}`);
  };
  add('BatchMode', 'yes');
  add('ConnectTimeout', '15');
  add('ServerAliveInterval', '15');
  add('ServerAliveCountMax', '4');
  return [...defaults, ...t.options, ...(o.tty ? ['-tt'] : ['-T']), t.destination, remoteCommand];
}

/** Quote a word for a POSIX shell (and for bash, zsh, fish: '…' with ' spelled '\''). */
export function shQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A remote command that runs `script` with sh, whatever the login shell is (no newlines). */
export function shCommand(script: string): string {
  return `sh -c ${shQuote(script.replace(/\n\s*/g, ' '))}`;
}
