/**
 * Which recipe variables hold secrets, and the recipe/record with their values hidden. A variable
 * is secret when its declaration says `secret: true` or its name reads like a credential (a
 * `TOKEN`, `PASSWORD`/`PASSWD`, `SECRET`, `API_KEY`, `ACCESS_KEY`, `PRIVATE_KEY` or `CREDENTIAL`
 * part: HF_TOKEN, NGC_API_KEY, AWS_SECRET_ACCESS_KEY, ...). What a run keeps for `--resume`
 * (sflow_run.json, sflow_recipe.yaml) holds SECRET_PLACEHOLDER instead of such a value; a resume
 * asks for it again (`-s NAME=VALUE`).
 */
import { isPlainObject } from './collections.js';

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

/** secret variables whose value is still the record's placeholder (a resume not given them again) */
export function unrecordedSecrets(doc: Obj): string[] {
  return declarations(doc)
    .filter((v) => v.value === SECRET_PLACEHOLDER)
    .map((v) => String(v.name ?? ''));
}
