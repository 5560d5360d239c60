/** The validated recipe's normalised shape, warnings, JSON Schema and speed. */
import { describe, expect, it } from 'vitest';
import { recipeJsonSchema, validateRecipe, type Recipe } from '../../../src/config/schema/index.js';
import { recipe, task, y } from './helpers.js';
import { check } from './mini-json-schema.js';

function ok(doc: unknown): Recipe {
  const r = validateRecipe(doc);
  if (!r.ok) throw new Error(JSON.stringify(r.issues, null, 1));
  return r.recipe;
}
const firstTask = (doc: unknown) => ok(doc).workflow.tasks[0];

describe('normalised output', () => {
  it('defaults version to "0.1"', () => {
    expect(ok(recipe()).version).toBe('0.1');
    expect(ok(recipe({ version: '0.1' })).version).toBe('0.1');
  });

  it('always gives probe lists and moves match_pattern into regex_pattern', () => {
    const t = firstTask(
      recipe({}, [
        task({
          probes: {
            readiness: { log_watch: { match_pattern: 'READY', match_count: 2 }, timeout: 30 },
            failure: [{ log_watch: { regex_pattern: 're:Error', match_pattern: 're:Error' } }],
          },
        }),
      ]),
    );
    expect(t.probes?.readiness).toEqual([
      { log_watch: { regex_pattern: 'READY', match_count: 2 }, timeout: 30 },
    ]);
    expect(t.probes?.failure).toEqual([{ log_watch: { regex_pattern: 're:Error' } }]);
    expect(JSON.parse(JSON.stringify(t.probes))).toEqual(t.probes);
  });

  it('normalises the three result shapes', () => {
    const simple = firstTask(recipe({}, [task({ result: { ttft: 'TTFT: ([0-9.]+)' } })])).result;
    expect(simple).toEqual({
      patterns: [
        { name: 'ttft', regex: 'TTFT: ([0-9.]+)', type: 'auto', aggregate: 'last', required: false },
      ],
    });
    const adv = firstTask(
      recipe({}, [
        task({
          result: { source: 'log', patterns: [{ name: 'x', regex: 'y', type: 'float', required: true }] },
        }),
      ]),
    ).result;
    expect(adv).toEqual({
      source: 'log',
      patterns: [{ name: 'x', regex: 'y', type: 'float', aggregate: 'last', required: true }],
    });
    expect(firstTask(recipe({}, [task({ result: { file: 'out/r.json' } })])).result).toEqual({
      patterns: [],
      file: 'out/r.json',
    });
  });

  it('lower-cases literal replica policies and keeps expressions', () => {
    expect(
      firstTask(recipe({}, [task({ replicas: { count: 2, policy: ' Sequential' } })])).replicas?.policy,
    ).toBe('sequential');
    const expr = '${{ variables.P }}';
    expect(firstTask(recipe({}, [task({ replicas: { policy: expr } })])).replicas?.policy).toBe(expr);
  });

  it('reads one-entry script mappings back as lines', () => {
    const t = firstTask(
      y(
        'workflow:\n  name: w\n  tasks:\n    a:\n      script:\n        - echo "GPUs: $X"\n        - "sleep: 5"\n        - sleep: 5\n        - empty:\n',
      ),
    );
    expect(t.script).toEqual(['echo "GPUs: $X"', 'sleep: 5', 'sleep: 5', 'empty:']);
  });

  it('stringifies scalar header and label values; keeps inline backend mappings for the planner', () => {
    const r = ok(
      recipe(
        {
          operators: [
            { name: 'k', type: 'k8s', image: 'i', env: [{ name: 'N', value: 3 }], labels: { tier: 1 } },
          ],
        },
        [
          task({
            backend: { type: 'local' },
            probes: { readiness: { http_post: { url: 'http://h', headers: { 'X-N': 5 } } } },
          }),
        ],
      ),
    );
    const op = r.operators?.[0];
    expect(op?.type === 'k8s' && op.env?.[0].value).toBe('3');
    expect(op?.type === 'k8s' && op.labels?.tier).toBe('1');
    expect(r.workflow.tasks[0].probes?.readiness?.[0].http_post?.headers).toEqual({ 'X-N': '5' });
    expect(r.workflow.tasks[0].backend).toEqual({ type: 'local' });
  });

  it('types backends and operators by their discriminator', () => {
    const r = ok(
      recipe({
        backends: [
          { name: 's', type: 'slurm', account: 'a', partition: 'p', time: 30, nodes: 2 },
          { name: 'l', type: 'local' },
        ],
        operators: [
          { name: 'o1', type: 'srun', partition: 'gpu', ntasks: 4, container_mounts: ['/a:/a'] },
          { name: 'o2', type: 'python', python_exec: 'python3.12' },
          { name: 'o3', type: 'bash' },
        ],
      }),
    );
    const b = r.backends?.[0];
    expect(b?.type).toBe('slurm');
    if (b?.type === 'slurm') expect([b.account, b.time, b.nodes]).toEqual(['a', 30, 2]);
    expect(r.backends?.[1].type).toBe('local');
    const [srun, py, bash] = r.operators ?? [];
    expect(srun?.type).toBe('srun');
    if (srun?.type === 'srun')
      expect([srun.partition, srun.ntasks, srun.container_mounts]).toEqual(['gpu', 4, ['/a:/a']]);
    expect(py?.type).toBe('python');
    if (py?.type === 'python') expect(py.python_exec).toBe('python3.12');
    expect(bash).toEqual({ name: 'o3', type: 'bash' });
    // the discriminator picks the shape: a field of another kind is refused
    const wrong = validateRecipe(recipe({ operators: [{ name: 'x', type: 'bash', python_exec: 'p' }] }));
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) expect(JSON.stringify(wrong.issues)).toContain('python_exec');
  });
});

describe('warnings', () => {
  it('warns on a variable declared twice (the last one wins)', () => {
    const r = validateRecipe(
      recipe({
        variables: [
          { name: 'X', value: 1 },
          { name: 'X', value: 2 },
        ],
      }),
    );
    expect(r.ok && r.warnings).toEqual([
      {
        path: ['variables', 1, 'name'],
        message: "variable 'X' is declared more than once; the last declaration wins",
      },
    ]);
  });
  it('gives no warnings for a plain recipe', () => {
    const r = validateRecipe(recipe());
    expect(r.ok && r.warnings).toEqual([]);
  });
});

describe('recipeJsonSchema', () => {
  const schema = recipeJsonSchema() as Record<string, unknown>;
  const dictForm = y(`
version: "0.1"
variables:
  N: 2
  MODE: { value: fast, domain: [fast, slow] }
backends:
  local: { type: local, gpus_per_node: 4 }
workflow:
  name: demo
  variables:
    W: hello
  tasks:
    prep:
      script: ["echo prep"]
    main:
      depends_on: [prep]
      script: ["echo main"]
      resources: { gpus: { count: "\${{ variables.N }}" } }
`);

  it('is a draft 2020-12 object schema that forbids unknown top-level keys', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.type).toBe('object');
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties as object)).toEqual([
      'version',
      'variables',
      'artifacts',
      'backends',
      'operators',
      'storage',
      'workflow',
    ]);
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
  });

  it('accepts list form and dict form (with variable shorthand) alike', async () => {
    const { parse } = await import('yaml');
    const raw = parse(`
variables: { N: 2, MODE: { value: fast } }
backends: { local: { type: local } }
workflow: { name: demo, tasks: { a: { script: [x] }, b: { script: [y], depends_on: [a] } } }
`);
    expect(check(schema, raw)).toEqual([]);
    expect(check(schema, dictForm)).toEqual([]);
    expect(validateRecipe(dictForm).ok).toBe(true);
  });

  it('rejects what validation rejects structurally', async () => {
    const { parse } = await import('yaml');
    expect(check(schema, parse('foo: 1\nworkflow: {name: w, tasks: {a: {script: [x]}}}'))).not.toEqual([]);
    expect(check(schema, parse('workflow: {name: w, tasks: {a: {scirpt: [x]}}}'))).not.toEqual([]);
    expect(
      check(schema, parse('backends: {b: {type: slrum}}\nworkflow: {name: w, tasks: {a: {script: [x]}}}')),
    ).not.toEqual([]);
  });
});

describe('scale', () => {
  // how fast this is, is measured in bench/ (bench/dry-run.mjs: 1,000 tasks), never asserted here
  it('validates a 1,000-task recipe, normalising every task', () => {
    const tasks = Array.from({ length: 1000 }, (_, i) =>
      task({
        name: `t${i}`,
        script: ['echo hi', { 'echo x': 'y' }],
        depends_on: i ? [`t${i - 1}`] : [],
        resources: { gpus: { count: 1 } },
        probes: { readiness: { log_watch: { match_pattern: 'ok' } } },
        replicas: { count: 2, policy: 'parallel' },
      }),
    );
    const r = validateRecipe(recipe({}, tasks));
    if (!r.ok) throw new Error(JSON.stringify(r.issues.slice(0, 3)));
    expect(r.recipe.workflow.tasks).toHaveLength(1000);
    expect(r.recipe.workflow.tasks.every((t) => t.script[1] === 'echo x: y')).toBe(true);
    expect(
      r.recipe.workflow.tasks.every((t) => t.probes?.readiness?.[0].log_watch?.regex_pattern === 'ok'),
    ).toBe(true);
  });
});
