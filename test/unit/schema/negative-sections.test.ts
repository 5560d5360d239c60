/** One focused rejection per rule: top level, variables, artifacts, backends. */
import { describe, expect, it } from 'vitest';
import { validateRecipe } from '../../../src/config/schema/index.js';
import { findIssue, recipe, task, type Expected } from './helpers.js';

type Case = [string, unknown, Expected];

const slurm = (extra: object = {}) => ({
  name: 'c',
  type: 'slurm',
  account: 'a',
  partition: 'p',
  time: '01:00:00',
  nodes: 1,
  ...extra,
});
const srun = (extra: object = {}) => ({ name: 'op', type: 'srun', ...extra });

const CASES: Case[] = [
  [
    'unknown top-level key',
    recipe({ foo: 1 }),
    { path: ['foo'], message: "unknown key 'foo' in the top level of the recipe" },
  ],
  [
    'tasks at top level',
    recipe({ tasks: [] }),
    { path: ['tasks'], message: /unknown key 'tasks'/, hint: /workflow: \{name, tasks\}/ },
  ],
  [
    'unquoted version',
    recipe({ version: 0.1 }),
    { path: ['version'], message: `'version' must be the string "0.1", got number 0.1`, hint: /quote it/ },
  ],
  [
    'unsupported version',
    recipe({ version: '0.2' }),
    { path: ['version'], message: `'version' must be the string "0.1", got string '0.2'` },
  ],
  [
    'missing workflow',
    { version: '0.1' },
    { path: ['workflow'], message: "missing required key 'workflow'" },
  ],
  [
    'collection not in list form',
    recipe({ backends: { a: { type: 'local' } } }),
    { path: ['backends'], message: "expected a list for 'backends', got a mapping" },
  ],
  // variables
  [
    'variable without value',
    recipe({ variables: [{ name: 'X' }] }),
    { path: ['variables', 0, 'value'], message: "missing required key 'value'" },
  ],
  [
    'value outside domain',
    recipe({ variables: [{ name: 'M', value: 'c', domain: ['a', 'b'] }] }),
    { path: ['variables', 0, 'value'], message: "Value 'c' is not in the allowed domain: ['a', 'b']" },
  ],
  [
    'numeric value outside domain',
    recipe({ variables: [{ name: 'N', value: 3, domain: [1, 2] }] }),
    { path: ['variables', 0, 'value'], message: 'Value 3 is not in the allowed domain: [1, 2]' },
  ],
  [
    'variable key typo',
    recipe({ variables: [{ name: 'X', value: 1, descripton: 'd' }] }),
    {
      path: ['variables', 0, 'descripton'],
      message: "unknown key 'descripton' in variable",
      hint: "did you mean 'description'?",
    },
  ],
  [
    'workflow variable domain',
    recipe({}, [task()], { variables: [{ name: 'W', value: 9, domain: [] }] }),
    { path: ['workflow', 'variables', 0, 'value'], message: 'Value 9 is not in the allowed domain: []' },
  ],
  // artifacts
  [
    'artifact without scheme',
    recipe({ artifacts: [{ name: 'M', uri: '/models/x' }] }),
    { path: ['artifacts', 0, 'uri'], message: /URI must have a scheme/ },
  ],
  [
    'artifact with empty path',
    recipe({ artifacts: [{ name: 'M', uri: 'fs://' }] }),
    { path: ['artifacts', 0, 'uri'], message: /has no location or path/ },
  ],
  [
    'content on a non-file URI',
    recipe({ artifacts: [{ name: 'M', uri: 'fs:///x', content: 'hi' }] }),
    {
      path: ['artifacts', 0, 'content'],
      message: "artifact 'M': inline content is only supported for 'file://' URIs",
    },
  ],
  // backends
  [
    'two default backends',
    recipe({
      backends: [
        { name: 'a', type: 'local', default: true },
        { name: 'b', type: 'local', default: true },
      ],
    }),
    { path: ['backends', 1, 'default'], message: /^Multiple default backends found: a, b\./ },
  ],
  [
    'unknown backend type',
    recipe({ backends: [{ name: 'a', type: 'slrum' }] }),
    {
      path: ['backends', 0, 'type'],
      message: "unknown backend type 'slrum'",
      hint: "did you mean 'slurm'? valid backend types: local, docker, slurm, kubernetes",
    },
  ],
  [
    'backend without type',
    recipe({ backends: [{ name: 'a' }] }),
    {
      path: ['backends', 0, 'type'],
      message: "missing required key 'type' in backend",
      hint: /local, docker, slurm, kubernetes/,
    },
  ],
  [
    'negative gpus_per_node',
    recipe({ backends: [{ name: 'a', type: 'local', gpus_per_node: -1 }] }),
    { path: ['backends', 0, 'gpus_per_node'], message: 'must be >= 0, got -1' },
  ],
  [
    'non-numeric gpus_per_node',
    recipe({ backends: [{ name: 'a', type: 'local', gpus_per_node: 'abc' }] }),
    {
      path: ['backends', 0, 'gpus_per_node'],
      message: "expected an integer or a ${{ }} expression, got string 'abc'",
    },
  ],
  [
    'fractional nodes',
    recipe({ backends: [slurm({ nodes: 1.5 })] }),
    { path: ['backends', 0, 'nodes'], message: 'expected an integer or a ${{ }} expression, got number 1.5' },
  ],
  [
    'slurm key typo',
    recipe({ backends: [slurm({ partiton: 'x' })] }),
    {
      path: ['backends', 0, 'partiton'],
      message: "unknown key 'partiton' in slurm backend",
      hint: "did you mean 'partition'?",
    },
  ],
  [
    'slurm without account',
    recipe({ backends: [{ name: 'c', type: 'slurm', partition: 'p', time: 5, nodes: 1 }] }),
    { path: ['backends', 0, 'account'], message: "missing required key 'account'" },
  ],
  [
    'docker nodes vs hosts',
    recipe({
      backends: [
        {
          name: 'd',
          type: 'docker',
          image: 'i',
          nodes: 3,
          hosts: [
            { name: 'h1', address: 'a' },
            { name: 'h2', address: 'b' },
          ],
        },
      ],
    }),
    {
      path: ['backends', 0, 'nodes'],
      message: "backend 'd': nodes (3) disagrees with the number of hosts (2)",
    },
  ],
  [
    'docker host without address',
    recipe({ backends: [{ name: 'd', type: 'docker', hosts: [{ name: 'h1' }] }] }),
    { path: ['backends', 0, 'hosts', 0], message: "docker host 'h1' needs an 'address'" },
  ],
  [
    'slurm node both included and excluded',
    recipe({ backends: [slurm({ include_nodes: ['n1', 'n2'], exclude_nodes: ['n3', 'n2'] })] }),
    {
      path: ['backends', 0, 'exclude_nodes', 1],
      message: "backend 'c': node 'n2' is in both include_nodes and exclude_nodes",
    },
  ],
  [
    'docker pool host both included and excluded',
    recipe({
      backends: [
        {
          name: 'd',
          type: 'docker',
          hosts: [{ name: 'h1', address: 'a' }],
          include_nodes: ['h1'],
          exclude_nodes: ['h1'],
        },
      ],
    }),
    {
      path: ['backends', 0, 'exclude_nodes', 0],
      message: "backend 'd': node 'h1' is in both include_nodes and exclude_nodes",
    },
  ],
  [
    'duplicate backend names',
    recipe({
      backends: [
        { name: 'a', type: 'local' },
        { name: 'a', type: 'local' },
      ],
    }),
    { path: ['backends', 1, 'name'], message: 'Duplicate backend names found: a' },
  ],
];

describe('rejections by section', () => {
  it.each(CASES)('%s', (_name, doc, expected) => {
    expect(findIssue(doc, expected)).toBeTruthy();
  });

  it('unknown keys point at the key itself', () => {
    const i = findIssue(recipe({ foo: 1 }), { path: ['foo'], message: /unknown key/ });
    expect(i.atKey).toBe(true);
  });
});

describe('accepted edge values', () => {
  const ok = (doc: unknown) => {
    const r = validateRecipe(doc);
    expect(r.ok ? [] : r.issues).toEqual([]);
    return r;
  };
  it('null variable values, expression values with a domain, free variable types', () => {
    ok(
      recipe({
        variables: [
          { name: 'A', value: null },
          { name: 'B', value: '${{ variables.A }}', domain: [1] },
          { name: 'C', value: 1, type: 'weird' },
        ],
      }),
    );
  });
  it('expression URIs skip the scheme check; Kubernetes may be CPU-only', () => {
    ok(
      recipe({
        artifacts: [{ name: 'M', uri: '${{ variables.P }}' }],
        backends: [{ name: 'k', type: 'kubernetes', namespace: 'n', nodes: 1, gpus_per_node: 0 }],
      }),
    );
  });
  it('expressions wherever a number or boolean is accepted', () => {
    ok(
      recipe({
        backends: [slurm({ nodes: '${{ variables.N }}', gpus_per_node: '${{ variables.G }}' })],
        operators: [srun({ exclusive: '${{ variables.X }}', ntasks: '${{ variables.N * 2 }}' })],
      }),
    );
  });
});
