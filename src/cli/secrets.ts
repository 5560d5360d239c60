/**
 * Secret variables without `ps`: the commands that run a recipe (`run`, `run --resume`, `batch`,
 * `--ssh`) take secret values from the environment (`SFLOW_SECRET_<NAME>`), from files
 * (`--secret-file NAME=PATH`) or, for a secret still without a value (a resume: the record keeps
 * none; a recipe's `value: null`), from a prompt on the terminal that echoes nothing. `-s NAME=…`
 * still works but is warned about for a secret: a command line is readable by every local user.
 */
import type { LoadedRecipe, LoadOptions } from '../config/load.js';
import { SflowError } from '../util/sflow-error.js';
import {
  missingSecrets,
  SECRET_ENV_PREFIX,
  secretVariableNames,
  type SecretSources,
} from '../config/secret-variables.js';
import { loadOptions } from './common.js';

/** answers typed at the prompt, kept with the command's options (a later load reuses them) */
const ANSWERS = 'secretAnswers';

/** the one answers object of these options (made on first use, so every source sees later answers) */
function answersOf(opts: Record<string, unknown>): Record<string, string> {
  const a = opts[ANSWERS];
  if (a && typeof a === 'object') return a as Record<string, string>;
  const made: Record<string, string> = {};
  opts[ANSWERS] = made;
  return made;
}

export function secretSources(
  opts: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
): SecretSources {
  return {
    env,
    files: ((opts.secretFile as string[] | undefined) ?? []).map(String),
    given: answersOf(opts),
  };
}

/** the load options of a command that runs the recipe: its secret sources included */
export function runLoadOptions(files: string[], opts: Record<string, unknown>): LoadOptions {
  return { ...loadOptions(files, opts), secrets: secretSources(opts) };
}

/** the values typed at the prompt (NAME → value), for a job that needs them in its environment */
export function promptedSecrets(opts: Record<string, unknown>): Record<string, string> {
  return { ...answersOf(opts) };
}

/** How to give the missing secrets, one line each way. */
export function howToGiveSecrets(names: string[]): string {
  const env = names.map((n) => `${SECRET_ENV_PREFIX}${n}=…`).join(' ');
  const files = names.map((n) => `--secret-file ${n}=PATH`).join(' ');
  return `give them without a command line: in the environment (export ${env}), in files (${files}), or run on a terminal to be asked`;
}

const interactive = () => Boolean(process.stdin.isTTY && process.stderr.isTTY);

/**
 * `load` with the secret sources; secret variables that still have no value are asked for on a
 * terminal and the recipe is loaded again with the answers. Without a terminal (or with
 * `prompt: false`) they are an error naming the ways to give them (`what` starts it).
 */
/** The error for secret variables without a value where nobody can be asked. */
export function secretsMissing(what: string, missing: string[]): SflowError {
  return new SflowError(
    'cli.secret_missing',
    `${what}: the secret variable(s) ${missing.join(', ')} have no value here (sflow never writes a secret value to a run folder or a record)`,
    { phase: 'preflight', hint: howToGiveSecrets(missing) },
  );
}

export async function loadWithSecrets(
  load: () => LoadedRecipe,
  opts: Record<string, unknown>,
  what: string,
): Promise<LoadedRecipe> {
  const loaded = load();
  const missing = missingSecrets(loaded.doc);
  if (missing.length === 0) return loaded;
  if (!interactive()) throw secretsMissing(what, missing);
  const answers = answersOf(opts);
  for (const name of missing) answers[name] = await promptHidden(`${name} (secret, not echoed): `, name);
  return load();
}

/** Warns once per secret variable that `-s` put on sflow's command line. */
export function warnSecretsOnCommandLine(loaded: LoadedRecipe, warn: (s: string) => void): void {
  const secret = secretVariableNames(loaded.doc);
  for (const o of loaded.setOverrides)
    if (secret.has(o.key))
      warn(
        `-s ${o.key}=… puts a secret on sflow's command line, which every user of this machine can read (ps): give it as ${SECRET_ENV_PREFIX}${o.key} in the environment or with --secret-file ${o.key}=PATH`,
      );
}

/** One line from the terminal without echo (backspace edits; Ctrl-C / Ctrl-D give up). */
function promptHidden(label: string, name: string): Promise<string> {
  const stdin = process.stdin;
  // no echo from here on, before the question is seen (a fast answer would be echoed otherwise)
  stdin.setRawMode(true);
  process.stderr.write(label);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (err?: Error): void => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const giveUp = (why: string, exitCode: number) =>
      finish(
        new SflowError('cli.secret_prompt', `no value for the secret variable ${name}: ${why}`, {
          phase: 'usage',
          exitCode,
          hint: howToGiveSecrets([name]),
        }),
      );
    const onData = (chunk: string): void => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return value ? finish() : giveUp('nothing was typed', 1);
        if (ch === '\u0003') return giveUp('interrupted', 130);
        if (ch === '\u0004') return value ? finish() : giveUp('end of input', 1);
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.on('data', onData);
  });
}
