/**
 * The command-line surface as a user meets it (spec cli.md §9.0, §9.9, §9.10): version, help,
 * usage errors (exit 2, no stack), the default recipe, `--tui --dry-run`, and `sflow schema`.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../helpers/scratch.js';
import { BIN, hasStackTrace, REPO, sflow } from '../helpers/cli.js';
import { check } from '../unit/schema/mini-json-schema.js';

const DOCS_LINE = /\nDocs: .+\n?$/;
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
const tmp = () => scratchDir('sflow-cli-');

describe('version and help', () => {
  it('--version and -V print the version and the Node version, exit 0', () => {
    for (const flag of ['--version', '-V']) {
      const r = sflow([flag]);
      expect(r.code, flag).toBe(0);
      expect(r.stdout.split('\n')[0]).toBe(`sflow ${pkg.version}`);
      expect(r.stdout).toContain(process.version);
      expect(r.stderr).toBe('');
    }
  });

  it.each([[[]], [['run']], [['compose']], [['visualize']], [['schema']]])(
    '%j --help ends with the docs line and exits 0',
    (cmd) => {
      const r = sflow([...cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: sflow/);
      if (cmd.length) expect(r.stdout).toContain(`sflow ${cmd[0]} [options]`);
      expect(r.stdout).toMatch(DOCS_LINE);
      expect(r.stderr).toBe('');
    },
  );

  it('`sflow` alone prints the help (with every command) and exits 2 like a missing command', () => {
    const r = sflow([]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^Usage: sflow/);
    for (const c of ['run', 'compose', 'visualize', 'schema'])
      expect(r.stdout).toMatch(new RegExp(`\\n  ${c} `));
    expect(r.stdout).toMatch(DOCS_LINE);
  });
});

describe('usage errors exit 2 without a stack trace', () => {
  it('an unknown option', () => {
    const r = sflow(['run', '--dry-rnu', '-f', 'examples/hello.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--dry-rnu'");
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it('an unknown command, with a suggestion', () => {
    const r = sflow(['rnu']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command 'rnu' \(did you mean 'run'\?\)/);
    expect(r.stdout).toBe('');
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it('a missing -f file', () => {
    const r = sflow(['run', '-f', 'no/such/recipe.yaml', '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^✗ .*file not found: no\/such\/recipe\.yaml/m);
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it('`sflow run` with no -f and no ./sflow.yaml', () => {
    const r = sflow(['run', '--dry-run'], { cwd: tmp() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('sflow.yaml');
    expect(hasStackTrace(r.stderr)).toBe(false);
  });
});

describe('run', () => {
  it('uses ./sflow.yaml by default; --tui with --dry-run prints a notice that --tui is ignored', () => {
    const dir = tmp();
    writeFileSync(
      join(dir, 'sflow.yaml'),
      'workflow:\n  name: default_file\n  tasks:\n    - name: a\n      script: [echo hi]\n',
    );
    const r = sflow(['run', '--dry-run', '--tui'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/--tui is ignored with --dry-run/);
    expect(r.stdout).toContain('Dry-run complete: default_file');
    expect(r.stdout).toContain('Configuration is valid');
  });
});

describe('sflow schema', () => {
  it('prints a JSON Schema that accepts list- and dict-form recipes and rejects unknown keys', () => {
    const r = sflow(['schema']);
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.stdout) as Record<string, any>;
    expect(schema.$schema).toMatch(/json-schema\.org/);
    expect(schema.properties.workflow).toBeTypeOf('object');
    const dictForm = parse(
      'version: "0.1"\nvariables:\n  N: 2\n  M: {value: 3, type: integer}\nbackends:\n  b: {type: local}\nworkflow:\n  name: w\n  variables:\n    W: 1\n  tasks:\n    a:\n      script: [echo a]\n    b:\n      depends_on: [a]\n      script: [echo b]\n',
    );
    const listForm = parse(
      'variables:\n  - {name: N, value: 2}\nworkflow:\n  name: w\n  tasks:\n    - name: a\n      script: [echo a]\n',
    );
    expect(check(schema, dictForm)).toEqual([]);
    expect(check(schema, listForm)).toEqual([]);
    expect(check(schema, parse('foo: 1\nworkflow: {name: w, tasks: {a: {script: [x]}}}'))).not.toEqual([]);
  });

  it('-o writes the same schema to a file and says where', () => {
    const out = join(tmp(), 'schema.json');
    const r = sflow(['schema', '-o', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`Saved to ${out}`);
    const schema = JSON.parse(readFileSync(out, 'utf8')) as Record<string, any>;
    expect(schema.properties.workflow).toBeTypeOf('object');
  });

  it('a reader that closes the pipe early is not an error', async () => {
    const child = spawn(process.execPath, [BIN, 'schema'], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((res) => child.on('close', (c) => res(c)));
    expect(code).toBe(0);
    expect(stderr).not.toMatch(/EPIPE|Error/);
  });
});
