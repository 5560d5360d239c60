/**
 * `sflow compose` (spec cli.md §9.3, config.md §4.8) on the 11_modular fragments, read in place:
 * case B with and without --resolve, match_pattern round trip, a single file, and errors.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { hasStackTrace, sflow } from '../helpers/cli.js';
import { describeWithShared, sharedPath } from '../helpers/shared.js';

type Obj = Record<string, any>;

const MODULAR = sharedPath('spec', 'examples', '11_modular');
const made: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'sflow-compose-'));
  made.push(d);
  return d;
};
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
const compose = (args: string[], cwd = MODULAR) => sflow(['compose', ...args], { cwd });

describeWithShared(
  'spec/examples/11_modular',
  'case B: compose base server bench -M agg_* -o out.yaml',
  () => {
    const out = join(tmp(), 'nested', 'composed.yaml');
    const r = compose(['base.yaml', 'server.yaml', 'bench.yaml', '-M', 'agg_*', '-o', out]);

    it('exits 0, says where it wrote, and prints the override warning on stderr', () => {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`Composed 3 files -> ${out}\n`);
      expect(r.stderr).toContain(
        '  compose override: variables.REQUESTS: overridden by bench.yaml (previously from base.yaml), value: 3 → 5',
      );
      expect(r.stderr).toMatch(/removed 1 reference\(s\) to absent tasks: bench\.depends_on: agg_server/);
    });

    it('writes a plain list-form recipe: variables, workflow name, tasks in file order', () => {
      const text = readFileSync(out, 'utf8');
      expect(text.split('\n')[0]).toBe("version: '0.1'");
      const doc = parse(text) as Obj;
      expect(doc.version).toBe('0.1');
      expect(doc.variables).toEqual([
        { name: 'PORT', type: 'integer', value: 18090 },
        { name: 'REQUESTS', type: 'integer', value: 5 },
        { name: 'SERVER_MSG', value: 'hi' },
      ]);
      expect(doc.workflow.name).toBe('modular_demo');
      expect(doc.workflow.tasks.map((t: Obj) => t.name)).toEqual(['server', 'bench']);
      expect(doc.workflow.tasks[1].depends_on).toEqual(['server']);
      // without --resolve expressions are left untouched
      expect(doc.workflow.tasks[0].probes.readiness.tcp_port.port).toBe('${{ variables.PORT }}');
      // a blank line separates the tasks
      expect(text).toMatch(/\n\n {4}- name: bench\n/);
    });

    it('the output re-loads and dry-runs on its own', () => {
      const d = sflow(['run', '-f', out, '--dry-run'], { cwd: tmp() });
      expect(d.code, d.stderr).toBe(0);
      expect(d.stdout).toContain('Dry-run complete: modular_demo');
      expect(d.stdout).toContain('Configuration is valid');
    });
  },
);

describeWithShared('spec/examples/11_modular', 'case B with --resolve', () => {
  const r = compose(['base.yaml', 'server.yaml', 'bench.yaml', '-M', 'agg_*', '--resolve']);
  const doc = parse(r.stdout) as Obj;

  it('writes only the YAML to stdout', () => {
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('Composed');
    expect(doc.workflow.name).toBe('modular_demo');
  });

  it('inlines PORT, REQUESTS and SERVER_MSG in scripts and probe and drops the variables section', () => {
    expect(doc.variables).toBeUndefined();
    const [server, bench] = doc.workflow.tasks as Obj[];
    expect(server.probes.readiness.tcp_port.port).toBe(18090);
    expect(server.script[0]).toBe(
      'exec python3 -m http.server 18090 --bind 127.0.0.1 --directory "${SFLOW_TASK_OUTPUT_DIR}"',
    );
    expect(bench.script).toEqual([
      `for i in $(seq 1 5); do python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:18090/')"; done`,
      'echo "sent 5 requests to server says hi"',
    ]);
    expect(bench.depends_on).toEqual(['server']);
    expect(r.stdout).not.toContain('${{');
  });
});

describe('probes and single files', () => {
  const dir = tmp();
  writeFileSync(
    join(dir, 'svc.yaml'),
    'workflow:\n  name: mp\n  tasks:\n    - name: server\n      script: ["echo READY; sleep 1"]\n      probes:\n        readiness:\n          log_watch: {match_pattern: "READY", match_count: 1}\n          timeout: 30\n    - name: client\n      depends_on: [server]\n      script: [echo ok]\n',
  );
  writeFileSync(
    join(dir, 'watch.yaml'),
    'workflow:\n  tasks:\n    - name: client\n      probes:\n        failure:\n          - log_watch: {logger: server, match_pattern: "re:Traceback"}\n',
  );

  it('a match_pattern probe survives compose → reload, written as regex_pattern only', () => {
    const r = compose(['svc.yaml', 'watch.yaml', '-o', 'out.yaml'], dir);
    expect(r.code, r.stderr).toBe(0);
    const text = readFileSync(join(dir, 'out.yaml'), 'utf8');
    expect(text).not.toContain('match_pattern');
    const tasks = (parse(text) as Obj).workflow.tasks as Obj[];
    expect(tasks[0].probes.readiness.log_watch).toEqual({ regex_pattern: 'READY', match_count: 1 });
    expect(tasks[1].probes.failure).toEqual([
      { log_watch: { logger: 'server', regex_pattern: 're:Traceback' } },
    ]);
    const d = sflow(['run', '-f', 'out.yaml', '--dry-run'], { cwd: dir });
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toMatch(/READY/);
  });

  it('a single file composes (list form, nulls removed except a required value: null)', () => {
    writeFileSync(
      join(dir, 'one.yaml'),
      'variables:\n  N: 2\n  E:\nworkflow:\n  name: one\n  timeout:\n  tasks:\n    a:\n      script:\n        - |\n          echo one\n          echo two\n',
    );
    const r = compose(['one.yaml', '-s', 'N=3'], dir);
    expect(r.code, r.stderr).toBe(0);
    const doc = parse(r.stdout) as Obj;
    expect(doc.variables).toEqual([
      { name: 'N', value: 3 },
      { name: 'E', value: null },
    ]);
    expect(doc.workflow).toEqual({ name: 'one', tasks: [{ name: 'a', script: ['echo one\necho two\n'] }] });
    // multi-line strings are literal blocks
    expect(r.stdout).toMatch(/script:\n {8}- \|\n {10}echo one\n {10}echo two\n/);
  });
});

describeWithShared('spec/examples/11_modular', 'errors in the 11_modular fragments', () => {
  it('a composition that fails validation: exit 1, the usual error shape with the location, no stack', () => {
    const r = compose(['base.yaml', 'server.yaml', 'bench.yaml']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^✗ Configuration error: bench\.yaml:15:28: Composed configuration validation failed: .*unknown task 'agg_server'/,
    );
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it('a YAML error in a fragment names the fragment', () => {
    const dir = tmp();
    writeFileSync(join(dir, 'bad.yaml'), 'workflow:\n  name: [x\n');
    const r = compose([join(MODULAR, 'base.yaml'), 'bad.yaml'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^✗ Configuration error: bad\.yaml:2:\d+: invalid YAML/);
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it('-M with a single file is a usage error (exit 2)', () => {
    const r = compose(['bench.yaml', '-M', 'agg_server']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^✗ Usage error: /);
    expect(r.stderr).toContain('only valid with multiple input files');
  });
});

describe('errors', () => {
  it('no input files: a usage error (exit 2) "no input files provided"', () => {
    const r = compose([], tmp());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^✗ Usage error: no input files provided/);
    expect(hasStackTrace(r.stderr)).toBe(false);
  });
});
