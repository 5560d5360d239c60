/**
 * What a new user meets first (issue 8): usage errors with one shape, the typo located at the
 * typo, plan-time name limits, a bounded failure for an output folder that cannot be made, a
 * refused sweep that would run one value, rendered storage targets, the hint for arithmetic on
 * text, and tidy help and messages. In-process through the CLI's entry, except the /proc case,
 * which runs the built CLI in a child with a deadline (it used to hang).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasStackTrace, REPO, sflow } from '../helpers/cli.js';
import { sflowInProcess as cli } from '../helpers/cli-inprocess.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-first-use-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
function workdir(files: Record<string, string> = {}): string {
  const d = join(root, String(++n));
  mkdirSync(d);
  for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
  return d;
}

const HELLO = 'workflow:\n  name: hello\n  tasks:\n    - name: a\n      script: [echo hi]\n';

describe('-f with something that is not a recipe file', () => {
  it('a folder and a missing file are both usage errors (exit 2) with the same shape', async () => {
    const cwd = workdir();
    mkdirSync(join(cwd, 'somedir'));
    const dir = await cli(['run', '-f', 'somedir', '--dry-run'], { cwd });
    const missing = await cli(['run', '-f', 'nope.yaml', '--dry-run'], { cwd });
    expect(dir.code).toBe(2);
    expect(missing.code).toBe(2);
    expect(dir.stderr).toBe(
      '✗ Usage error: somedir is a directory, not a recipe file\n  hint: check the path given with -f/--file\n',
    );
    expect(missing.stderr).toBe(
      '✗ Usage error: file not found: nope.yaml\n  hint: check the path given with -f/--file\n',
    );
  });
});

describe('a typo in a key', () => {
  it('is the error, located at the typo, with its did-you-mean, and no "missing script"', async () => {
    const cwd = workdir({
      'typo.yaml': 'workflow:\n  name: t\n  tasks:\n    - name: a\n      scirpt: [echo hi]\n',
    });
    const r = await cli(['run', '-f', 'typo.yaml', '--dry-run'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')[0]).toBe(
      "✗ Configuration error: typo.yaml:5:7: Configuration validation failed: workflow.tasks[0].scirpt: unknown key 'scirpt' in task",
    );
    expect(r.stderr).toContain("hint: did you mean 'script'?");
    expect(r.stderr).not.toContain('missing required key');
  });
});

describe('names that become file names', () => {
  const long = 'a'.repeat(300);
  const recipe = `workflow:\n  name: long\n  tasks:\n    - name: ${long}\n      script: [echo hi]\n`;

  it('a 300-character task name fails the dry-run, located, naming the limit', async () => {
    const cwd = workdir({ 'long.yaml': recipe });
    const r = await cli(['run', '-f', 'long.yaml', '--dry-run'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^✗ Configuration error: long\.yaml:4:13: task name 'a{40}…a{10}' is 300 bytes long/,
    );
    expect(r.stderr).toContain('255 bytes for one file name (NAME_MAX)');
    expect(r.stderr).toContain('at most 251 bytes');
  });

  it('the run fails the same way before anything is created: no run folder is left', async () => {
    const cwd = workdir({ 'long.yaml': recipe });
    const r = await cli(['run', '-f', 'long.yaml'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('NAME_MAX');
    expect(existsSync(join(cwd, 'sflow_output'))).toBe(false);
  });

  it('a workflow name too long for the run folder is refused at plan time too', async () => {
    const cwd = workdir({ 'w.yaml': HELLO.replace('name: hello', `name: ${'w'.repeat(240)}`) });
    const r = await cli(['run', '-f', 'w.yaml', '--dry-run'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/w\.yaml:2:9: workflow name is 240 bytes long/);
    expect(r.stderr).toContain('at most 232 bytes');
  });
});

describe('an output folder that cannot be created', () => {
  it.runIf(existsSync('/proc/self'))(
    '--output-dir /proc/x fails at once with a clear error (it used to spin forever)',
    () => {
      const cwd = workdir({ 'hello.yaml': HELLO });
      const r = sflow(['run', '-f', 'hello.yaml', '--output-dir', '/proc/x'], { cwd, timeoutMs: 20_000 });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/^✗ .*cannot create the run folder \/proc\/x\/hello-\d{8}-\d{6}-[0-9a-f]{6}/m);
      expect(r.stderr).toContain('does not allow creating folders there');
      expect(r.stderr).toContain('hint: choose another --output-dir');
      expect(hasStackTrace(r.stderr)).toBe(false);
    },
  );

  it('compose -o under a file is a usage error naming the folder', async () => {
    const cwd = workdir({ 'hello.yaml': HELLO, plain: 'x' });
    const r = await cli(['compose', 'hello.yaml', '-o', 'plain/out.yaml'], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `cannot create the folder for -o ${join(cwd, 'plain')}: ${join(cwd, 'plain')} exists and is not a folder`,
    );
  });
});

describe('a sweep list for a variable no task sweeps', () => {
  it('is refused, naming the tasks that read it and replicas.variables', async () => {
    const r = await cli(
      ['run', '-f', join(REPO, 'examples', 'hello.yaml'), '-s', 'TIMES=[1,3]', '--dry-run'],
      {
        cwd: workdir(),
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "--set TIMES=[1,3] gives a list (a sweep), but no task lists 'TIMES' under replicas.variables",
    );
    expect(r.stderr).toContain('the run would use only the first value (1)');
    expect(r.stderr).toContain("add 'replicas: {variables: [TIMES]}'");
    expect(r.stderr).toContain('(tasks reading TIMES: greet)');
  });
});

describe('plan rendering and hints', () => {
  it('storage targets are rendered in the dry-run', async () => {
    const cwd = workdir({
      's.yaml':
        "variables:\n  BUCKET: my-bucket\nstorage:\n  results:\n    type: s3\n    bucket: '${{ variables.BUCKET }}'\n    prefix: 'runs/${{ BUCKET }}'\n" +
        HELLO,
    });
    const r = await cli(['run', '-f', 's.yaml', '--dry-run'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      '  results: s3 bucket=my-bucket prefix=runs/my-bucket (not contacted in dry-run)',
    );
    expect(r.stdout).not.toContain('${{');
  });

  it('arithmetic on an untyped variable hints at type: integer', async () => {
    const cwd = workdir({
      'n.yaml':
        'variables:\n  N: "4"\nworkflow:\n  name: t\n  tasks:\n    - name: a\n      script: ["echo ${{ N + 1 }}"]\n',
    });
    const r = await cli(['run', '-f', 'n.yaml', '--dry-run'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('can only concatenate str (not "int") to str');
    expect(r.stderr).toContain("hint: a variable without 'type:' holds text here; declare 'type: integer'");
  });
});

describe('cosmetics', () => {
  it('help shows each default once and no "(default: [])"', async () => {
    for (const cmd of ['run', 'compose', 'visualize']) {
      const r = await cli([cmd, '--help']);
      expect(r.stdout, cmd).not.toContain('(default: [])');
      expect(r.stdout.match(/\(default: sflow\.yaml\)/g)?.length ?? 0, cmd).toBeLessThanOrEqual(1);
    }
  });

  it('compose says "1 file"', async () => {
    const cwd = workdir({ 'hello.yaml': HELLO });
    const r = await cli(['compose', 'hello.yaml', '-o', 'out.yaml'], { cwd });
    expect(r.stdout).toBe(`Composed 1 file -> ${join(cwd, 'out.yaml')}\n`);
  });

  it('a cycle error indents "Waiting behind it" and leaves it out when nothing waits', async () => {
    const dir = join(REPO, 'test', 'fixtures', 'invalid');
    const self = await cli(['run', '-f', 'v23-self-cycle.yaml', '--dry-run'], { cwd: dir });
    expect(self.stderr).not.toContain('Waiting behind it');
    const waiting = await cli(['run', '-f', 'v23-cycle-waiting.yaml', '--dry-run'], { cwd: dir });
    expect(waiting.stderr).toMatch(/\n {2}Waiting behind it: d\n/);
  });

  it('a run folder is never created by a failed dry-run or visualize', () => {
    expect(readdirSync(root).every((d) => !existsSync(join(root, d, 'sflow_output')))).toBe(true);
  });
});
