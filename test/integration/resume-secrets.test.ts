/**
 * Secret variables (`secret: true`, or a credential-like name such as API_TOKEN) are never written
 * to the run directory, so what `--resume` keeps (sflow_run.json, sflow_recipe.yaml) holds a
 * placeholder; a resume without the values again (and no terminal to ask on) is refused naming the
 * ways that keep them off command lines, and one given them (environment, file) runs the rest.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasStackTrace, sflow } from '../helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-resume-secret-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const TOKEN = 'tok-7f3a9c51e2-not-for-disk';
const DSN = 'postgres://u:pw-91c4d7@db/x';

const RECIPE = `version: "0.1"
variables:
  API_TOKEN: { value: "unset" }
  DB_URL: { value: "unset", secret: true }
  ROWS: 2
workflow:
  name: secrets
  tasks:
    - name: first
      script:
        - '[ "$API_TOKEN" = "$WANT_TOKEN" ] && [ "$DB_URL" = "$WANT_DSN" ] && echo first ok'
    - name: second
      depends_on: [first]
      script:
        - '[ ! -e "$MARKS/fail" ] || exit 3'
        - '[ "$API_TOKEN" = "$WANT_TOKEN" ] && [ "$DB_URL" = "$WANT_DSN" ] && echo second ok'
`;

/** every file under dir whose bytes contain needle */
function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) hits.push(...filesContaining(p, needle));
    else if (readFileSync(p).includes(needle)) hits.push(p);
  }
  return hits;
}

describe('secret variables and --resume', () => {
  it('records no secret value; a resume asks for it again, then runs with it', () => {
    const dir = join(root, 'case');
    const marks = join(dir, 'marks');
    mkdirSync(marks, { recursive: true });
    writeFileSync(join(dir, 'r.yaml'), RECIPE);
    writeFileSync(join(marks, 'fail'), '');
    const env = { MARKS: marks, WANT_TOKEN: TOKEN, WANT_DSN: DSN };
    const run = (args: string[]) => sflow(['run', ...args], { cwd: dir, env, timeoutMs: 120_000 });

    const first = run(['-f', 'r.yaml', '-s', `API_TOKEN=${TOKEN}`, '-s', `DB_URL=${DSN}`, '-s', 'ROWS=3']);
    expect(first.code, first.stderr).toBe(1);
    const out = join(dir, 'sflow_output');
    const runDir = join(out, readdirSync(out).filter((d) => !d.startsWith('_'))[0]);
    expect(readFileSync(join(runDir, 'first', 'first.log'), 'utf8')).toContain('first ok');
    for (const secret of [TOKEN, DSN, 'pw-91c4d7']) expect(filesContaining(runDir, secret)).toEqual([]);
    // the record still says which were set, and keeps the plain ones
    const record = JSON.parse(readFileSync(join(runDir, 'sflow_run.json'), 'utf8')) as {
      inputs: { set: string[] };
      variables: Record<string, { value: string }>;
    };
    expect(record.inputs.set).toEqual([
      'API_TOKEN=<secret: not recorded>',
      'DB_URL=<secret: not recorded>',
      'ROWS=3',
    ]);
    expect(record.variables.ROWS.value).toBe('3');

    rmSync(join(marks, 'fail'));
    const refused = run(['--resume', runDir]);
    expect(refused.code).not.toBe(0);
    expect(hasStackTrace(refused.stderr)).toBe(false);
    expect(refused.stderr).toContain('the secret variable(s) API_TOKEN, DB_URL have no value here');
    // the ways that keep the values off command lines (a terminal would be asked)
    expect(refused.stderr).toContain('export SFLOW_SECRET_API_TOKEN=… SFLOW_SECRET_DB_URL=…');
    expect(refused.stderr).toContain('--secret-file API_TOKEN=PATH --secret-file DB_URL=PATH');

    // one from the environment, one from a file outside the run folder
    const dsnFile = join(dir, 'dsn.txt');
    writeFileSync(dsnFile, `${DSN}\n`, { mode: 0o600 });
    const resumed = sflow(['run', '--resume', runDir, '--secret-file', `DB_URL=${dsnFile}`], {
      cwd: dir,
      env: { ...env, SFLOW_SECRET_API_TOKEN: TOKEN },
      timeoutMs: 120_000,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toContain('-s API_TOKEN');
    expect(readFileSync(join(runDir, 'second', 'second.log'), 'utf8')).toContain('second ok');
    for (const secret of [TOKEN, DSN]) expect(filesContaining(runDir, secret)).toEqual([]);
  });
});
