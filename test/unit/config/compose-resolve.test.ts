/** `sflow compose --resolve` (spec config.md §4.8) and the composed text, in-process. */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { composeText } from '../../../src/cli/compose.js';
import { normaliseCollections } from '../../../src/config/collections.js';
import { resolveComposed } from '../../../src/config/compose-resolve.js';
import { parseYamlText } from '../../../src/config/yaml-load.js';

type Obj = Record<string, any>;

const doc = (text: string): Obj => normaliseCollections(parseYamlText(text, 'r.yaml').value);
const resolve = (text: string): Obj => resolveComposed(doc(text));

describe('resolveComposed', () => {
  it('inlines variables resolvable from variables alone, in both ${{ }} and ${NAME} forms, and drops them', () => {
    const out = resolve(
      [
        'variables:',
        '  PORT: {type: integer, value: 8000}',
        '  HOST: localhost',
        '  URL: http://${{ variables.HOST }}:${{ variables.PORT }}',
        'workflow:',
        '  name: w',
        '  tasks:',
        '    - name: a',
        '      script:',
        '        - curl ${{ variables.URL }} ${PORT} $PORT',
        '      probes:',
        '        readiness:',
        '          tcp_port: {port: "${{ variables.PORT }}"}',
        '',
      ].join('\n'),
    );
    expect(out.variables).toBeUndefined();
    const t = out.workflow.tasks[0];
    // `$NAME` (no braces) is not a reference compose rewrites
    expect(t.script).toEqual(['curl http://localhost:8000 8000 $PORT']);
    expect(t.probes.readiness.tcp_port.port).toBe(8000);
  });

  it('coerces a string that is exactly one expression: "2" → 2, "true" → true, "1.5" → 1.5', () => {
    const out = resolve(
      'variables:\n  N: {type: integer, value: 4}\n  F: {type: float, value: 1.5}\nworkflow:\n  name: w\n  tasks:\n    - name: a\n      script: [x]\n      resources:\n        gpus:\n          count: ${{ variables.N // 2 }}\n      retries:\n        count: ${{ variables.N > 2 }}\n        interval: ${{ variables.F }}\n',
    );
    const t = out.workflow.tasks[0];
    expect(t.resources.gpus.count).toBe(2);
    expect(t.retries).toEqual({ count: true, interval: 1.5 });
  });

  it('keeps sweep and replica-count variables, and expressions that depend on the run', () => {
    const out = resolve(
      [
        'variables:',
        '  SIZE: {value: 1, domain: [1, 2]}',
        '  COUNT: {type: integer, value: 3}',
        '  TAG: v1',
        'workflow:',
        '  name: w',
        '  tasks:',
        '    - name: a',
        '      replicas:',
        '        variables: [SIZE]',
        '        count: ${{ variables.COUNT }}',
        '      script:',
        '        - echo ${{ variables.SIZE }} ${{ variables.TAG }} ${{ backends.b.nodes[0] }} ${{ task.name }}',
        '',
      ].join('\n'),
    );
    expect(out.variables.map((v: Obj) => v.name)).toEqual(['SIZE', 'COUNT']);
    expect(out.workflow.tasks[0].replicas.count).toBe('${{ variables.COUNT }}');
    expect(out.workflow.tasks[0].script).toEqual([
      'echo ${{ variables.SIZE }} v1 ${{ backends.b.nodes[0] }} ${{ task.name }}',
    ]);
  });

  it('never rewrites built-in environment names, and strips trailing whitespace', () => {
    const out = resolve(
      'variables:\n  HOME: /mine\n  SLURM_JOB_ID: "7"\n  A: a\nworkflow:\n  name: w\n  tasks:\n    - name: t\n      script:\n        - "echo ${HOME} ${SLURM_JOB_ID} ${A}   "\n        - |\n          echo ${A}\n\n',
    );
    expect(out.workflow.tasks[0].script).toEqual(['echo ${HOME} ${SLURM_JOB_ID} a', 'echo a']);
  });

  it('uses run-time semantics: an untyped number is a string, so arithmetic on it stays as written', () => {
    const out = resolve(
      'variables:\n  N: 4\n  TWICE: ${{ variables.N * 2 }}\n  HALF: ${{ variables.N / 2 }}\nworkflow:\n  name: w\n  tasks:\n    - name: t\n      script:\n        - echo ${{ variables.TWICE }} ${{ variables.HALF }} ${N}\n',
    );
    // '4' * 2 is string repetition; '4' / 2 is an error in a run, so HALF is left for the run to report
    expect(out.variables).toEqual([{ name: 'HALF', value: '${{ variables.N / 2 }}' }]);
    expect(out.workflow.tasks[0].script).toEqual(['echo 44 ${{ variables.HALF }} 4']);
  });

  it('renders floats written with a decimal point like Python', () => {
    const out = resolve(
      'variables:\n  R: {type: float, value: 2.0}\nworkflow:\n  name: w\n  tasks:\n    - name: t\n      script: ["echo ${R}"]\n',
    );
    expect(out.workflow.tasks[0].script).toEqual(['echo 2.0']);
  });

  it('resolves workflow variables from globals; a global cannot see a workflow variable', () => {
    const out = resolve(
      'variables:\n  G: g\n  BAD: ${{ variables.L }}\nworkflow:\n  name: w\n  variables:\n    L: ${{ variables.G }}-l\n  tasks:\n    - name: t\n      script: ["echo ${{ variables.L }} ${G}"]\n',
    );
    expect(out.workflow.variables).toBeUndefined();
    expect(out.variables).toEqual([{ name: 'BAD', value: '${{ variables.L }}' }]);
    expect(out.workflow.tasks[0].script).toEqual(['echo g-l g']);
  });

  it('a variable without a value stays a variable (it must be set with --set)', () => {
    const out = resolve(
      'variables:\n  E:\n  F: f\nworkflow:\n  name: w\n  tasks:\n    - name: t\n      script: ["echo ${E} ${F}"]\n',
    );
    expect(out.variables).toEqual([{ name: 'E', value: null }]);
    expect(out.workflow.tasks[0].script).toEqual(['echo ${E} f']);
  });
});

describe('composeText', () => {
  const text = composeText(
    doc(
      [
        'workflow:',
        '  name: w',
        '  variables: {A: 1, B: 2}',
        '  tasks:',
        '    - name: a',
        '      script:',
        '        - |',
        '          echo one',
        '          echo two',
        '      probes:',
        '        readiness:',
        '          log_watch: {match_pattern: READY}',
        '    - name: b',
        '      description: null',
        '      script: [echo b]',
        '  monitor:',
        '    enabled: true',
        'variables:',
        '  - {name: X, value: null}',
        'version: "0.1"',
        '',
      ].join('\n'),
    ),
  );

  it("writes version first as '0.1', then the sections in their order, separated by blank lines", () => {
    expect(text.startsWith("version: '0.1'\n\nworkflow:\n")).toBe(true);
    expect(text).toContain('\n\nvariables:\n  - name: X\n    value: null\n');
  });

  it('separates tasks (only tasks) by a blank line', () => {
    expect(text).toContain('  variables:\n    - name: A\n      value: 1\n    - name: B\n');
    expect(text).toContain('  tasks:\n    - name: a\n');
    expect(text).toContain('\n\n    - name: b\n');
    expect(text).toMatch(/echo b\n {2}monitor:\n/);
  });

  it('writes multi-line strings as literal blocks, drops nulls, renames match_pattern', () => {
    expect(text).toContain('      script:\n        - |\n          echo one\n          echo two\n');
    expect(text).not.toContain('description');
    expect(text).toContain('regex_pattern: READY');
    expect(text).not.toContain('match_pattern');
  });

  it('parses back to the same data', () => {
    const back = parse(text) as Obj;
    expect(back.workflow.tasks.map((t: Obj) => t.name)).toEqual(['a', 'b']);
    expect(back.workflow.variables).toEqual([
      { name: 'A', value: 1 },
      { name: 'B', value: 2 },
    ]);
  });
});
