/**
 * Which recipe variables hold secrets, and the recipe/record with their values hidden. A variable
 * is secret when its declaration says `secret: true` or its name reads like a credential (a
 * `TOKEN`, `PASSWORD`/`PASSWD`, `SECRET`, `API_KEY`, `ACCESS_KEY`, `PRIVATE_KEY` or `CREDENTIAL`
 * part: HF_TOKEN, NGC_API_KEY, AWS_SECRET_ACCESS_KEY, ...). What a run keeps for `--resume`
 * (sflow_run.json, sflow_recipe.yaml) holds SECRET_PLACEHOLDER instead of such a value; a resume
 * is given it again (SecretSources below, or a prompt on a terminal).
 */
import { readFileSync, statSync } from 'node:fs';
import { isPlainObject } from './collections.js';
import { SflowError } from '../util/sflow-error.js';
import { errorMessage } from '../util/errors.js';

type Obj = Record<string, unknown>;

/** stands for a secret value in the run record */
export const SECRET_PLACEHOLDER = '<secret: not recorded>';

const SECRET_NAME =
  /(^|_)(TOKEN|PASSWORD|PASSWD|SECRET|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)(_|$)/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

function declarations(doc: Obj): Obj[] {
  const lists = [doc.variables, isPlainObject(doc.workflow) ? doc.workflow.variables : undefined];
  return lists.flatMap((l) => (Array.isArray(l) ? l.filter(isPlainObject) : []));
}

/** names of the secret variables a (normalised) recipe document declares */
export function secretVariableNames(doc: Obj): Set<string> {
  const out = new Set<string>();
  for (const v of declarations(doc)) {
    const name = String(v.name ?? '');
    if (v.secret === true || isSecretName(name)) out.add(name);
  }
  return out;
}

/** a copy of the document whose secret variables' values (and sweep domains) are the placeholder */
export function redactSecretVariables(doc: Obj): Obj {
  const copy = structuredClone(doc);
  const secret = secretVariableNames(copy);
  for (const v of declarations(copy)) {
    if (!secret.has(String(v.name ?? ''))) continue;
    v.value = SECRET_PLACEHOLDER;
    if (Array.isArray(v.domain)) v.domain = v.domain.map(() => SECRET_PLACEHOLDER);
  }
  return copy;
}

/** `-s NAME=VALUE` arguments with a secret variable's value hidden */
export function redactSetArgs(args: string[], secret: Set<string>): string[] {
  return args.map((a) => {
    const i = a.indexOf('=');
    return i > 0 && secret.has(a.slice(0, i).trim()) ? `${a.slice(0, i + 1)}${SECRET_PLACEHOLDER}` : a;
  });
}

/** a secret variable's value from the environment: `SFLOW_SECRET_<NAME>` */
export const SECRET_ENV_PREFIX = 'SFLOW_SECRET_';

/**
 * Where secret values come from besides the recipe, none of them a command line (which `ps` shows
 * every local user): the environment (`SFLOW_SECRET_<NAME>`, for declared top-level variables),
 * files (`--secret-file NAME=PATH`: the file's text, one trailing newline dropped) and answers
 * given at a terminal prompt.
 */
export interface SecretSources {
  env?: NodeJS.ProcessEnv;
  /** `NAME=PATH` */
  files?: readonly string[];
  /** NAME → value typed at a prompt */
  given?: Readonly<Record<string, string>>;
}

/** the top-level variable NAME, or undefined */
function topLevel(doc: Obj, name: string): Obj | undefined {
  return (Array.isArray(doc.variables) ? doc.variables.filter(isPlainObject) : []).find(
    (v) => v.name === name,
  );
}

function secretFileValue(arg: string): [string, string] {
  const i = arg.indexOf('=');
  const name = i > 0 ? arg.slice(0, i).trim() : '';
  const path = i > 0 ? arg.slice(i + 1) : '';
  if (!name || !path)
    throw new SflowError('cli.secret_file_format', `--secret-file '${arg}': expected NAME=PATH`, {
      phase: 'usage',
      hint: 'e.g. --secret-file HF_TOKEN=~/.config/hf/token (the file holds the value)',
    });
  let text: string;
  try {
    if (!statSync(path).isFile()) throw new Error('not a regular file');
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new SflowError('cli.secret_file_unreadable', `--secret-file ${name}=${path}: ${errorMessage(e)}`, {
      phase: 'usage',
      hint: 'give a readable file that holds the value',
    });
  }
  return [name, text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text];
}

/**
 * Puts the values of the secret sources into the document's top-level variables (each becomes
 * secret: it is masked and never recorded). `setByFlag`: variables `-s` set — the environment
 * does not override them, a file naming one of them is a conflict. Returns the names applied.
 */
export function applySecretSources(
  doc: Obj,
  sources: SecretSources | undefined,
  setByFlag: Set<string>,
): string[] {
  if (!sources) return [];
  const values = new Map<string, string>();
  for (const arg of sources.files ?? []) {
    const [name, value] = secretFileValue(arg);
    if (setByFlag.has(name))
      throw new SflowError('cli.secret_twice', `${name} is given both with -s and with --secret-file`, {
        phase: 'usage',
        hint: 'give a secret once, with --secret-file (never -s: command lines are visible to every local user)',
      });
    values.set(name, value);
  }
  for (const [name, value] of Object.entries(sources.given ?? {}))
    if (!values.has(name)) values.set(name, value);
  const env = sources.env ?? {};
  for (const v of Array.isArray(doc.variables) ? doc.variables.filter(isPlainObject) : []) {
    const name = String(v.name ?? '');
    const value = env[`${SECRET_ENV_PREFIX}${name}`];
    if (value !== undefined && !values.has(name) && !setByFlag.has(name)) values.set(name, value);
  }
  for (const [name, value] of values) {
    const v = topLevel(doc, name);
    if (!v)
      throw new SflowError(
        'cli.secret_unknown_variable',
        `secret '${name}' names no top-level variable of the recipe`,
        {
          phase: 'usage',
          hint: 'declare it under `variables:` (secret values fill declared variables, as -s does)',
        },
      );
    v.value = value;
    // one value: a sweep of a secret is written in the recipe or given with -s
    delete v.domain;
    // a value given as a secret is one from now on (records hide it; a credential-like name already is)
    if (!isSecretName(name)) v.secret = true;
  }
  return [...values.keys()];
}

/**
 * Secret variables that still need a value: the run record's placeholder (a resume) or no value
 * at all (`value: null` / `value:`).
 */
export function missingSecrets(doc: Obj): string[] {
  const secret = secretVariableNames(doc);
  return declarations(doc)
    .filter(
      (v) =>
        secret.has(String(v.name ?? '')) &&
        (v.value === SECRET_PLACEHOLDER || v.value === null || v.value === undefined),
    )
    .map((v) => String(v.name ?? ''));
}
