/** One focused rejection per rule: workflow, tasks, resources. */
import { describe, expect, it } from 'vitest';
import { validateRecipe } from '../../../src/config/schema/index.js';
import { findIssue, recipe, task, type Expected } from './helpers.js';

type Case = [string, unknown, Expected];
const T = ['workflow', 'tasks', 0];
const one = (extra: Record<string, unknown>) => recipe({}, [task(extra)]);
const lw = (log_watch: Record<string, unknown>) => one({ probes: { readiness: { log_watch } } });

const CASES: Case[] = [
  // workflow
  [
    'workflow without name',
    { workflow: { tasks: [task()] } },
    { path: ['workflow', 'name'], message: "missing required key 'name'" },
  ],
  ['empty task list', recipe({}, []), { path: ['workflow', 'tasks'], message: "'tasks' cannot be empty" }],
  [
    'duplicate task names',
    recipe({}, [task(), task()]),
    { path: ['workflow', 'tasks', 1, 'name'], message: 'Duplicate task names found: a' },
  ],
  [
    'unknown dependency',
    recipe({}, [task(), task({ name: 'b', depends_on: ['aa'] })]),
    {
      path: ['workflow', 'tasks', 1, 'depends_on', 0],
      message: "Task 'b' depends on unknown task 'aa'",
      hint: "did you mean 'a'?",
    },
  ],
  [
    'dependency on a replica name',
    recipe({}, [task({ name: 'shard' }), task({ name: 'b', depends_on: ['shard_0'] })]),
    {
      path: ['workflow', 'tasks', 1, 'depends_on', 0],
      message: "Task 'b' depends on unknown task 'shard_0'",
      hint: /base task name 'shard'/,
    },
  ],
  [
    'log_watch logger unknown (single probe)',
    lw({ match_pattern: 'ok', logger: 'ghost' }),
    {
      path: [...T, 'probes', 'readiness', 'log_watch', 'logger'],
      message: "Task 'a' readiness probe refers to unknown task 'ghost'",
    },
  ],
  [
    'log_watch logger unknown (probe list)',
    one({ probes: { failure: [{ log_watch: { match_pattern: 'x', logger: 'ghost' } }] } }),
    {
      path: [...T, 'probes', 'failure', 0, 'log_watch', 'logger'],
      message: "Task 'a' failure probe refers to unknown task 'ghost'",
    },
  ],
  [
    'window on the workflow monitor',
    recipe({}, [task()], { monitor: { window: { start: 'a', end: 'b' } } }),
    {
      path: ['workflow', 'monitor', 'window'],
      message: "unknown key 'window' in workflow.monitor",
      hint: /only supported on task monitors/,
    },
  ],
  // task
  [
    'misspelt script',
    recipe({}, [{ name: 'a', scirpt: ['x'] }]),
    { path: [...T, 'scirpt'], message: "unknown key 'scirpt' in task", hint: "did you mean 'script'?" },
  ],
  [
    'task-level env',
    one({ env: { A: '1' } }),
    { path: [...T, 'env'], message: "unknown key 'env' in task", hint: /no task-level 'env'/ },
  ],
  ['empty script', one({ script: [] }), { path: [...T, 'script'], message: "'script' cannot be empty" }],
  [
    'script line read as a mapping',
    one({ script: [{ 'echo a': 'b', c: 'd' }] }),
    {
      path: [...T, 'script', 0],
      message: "script lines must be strings, got a mapping ('echo a', 'c')",
      hint: 'quote the line: a `key: value` line is read as a YAML mapping',
    },
  ],
  [
    'script line with a nested mapping',
    one({ script: [{ echo: { a: 1 } }] }),
    { path: [...T, 'script', 0], message: /got a mapping \('echo'\)/, hint: /quote the line/ },
  ],
  [
    'script not a list',
    one({ script: 'echo a' }),
    { path: [...T, 'script'], message: "expected a list for 'script', got string 'echo a'" },
  ],
  [
    'operator mapping without name',
    one({ operator: { ntasks: 2 } }),
    { path: [...T, 'operator', 'name'], message: "missing required key 'name'" },
  ],
  [
    'fail_fast not a boolean',
    one({ fail_fast: 'yes' }),
    { path: [...T, 'fail_fast'], message: "expected true or false, got string 'yes'" },
  ],
  [
    'task name with a slash',
    one({ name: 'a/b' }),
    { path: [...T, 'name'], message: /must not contain '\/'/ },
  ],
  [
    'depends_on not a list',
    recipe({}, [task(), task({ name: 'b', depends_on: 'a' })]),
    {
      path: ['workflow', 'tasks', 1, 'depends_on'],
      message: "expected a list for 'depends_on', got string 'a'",
    },
  ],
  // resources
  [
    'nodes indices and count',
    one({ resources: { nodes: { indices: [0], count: 1 } } }),
    {
      path: [...T, 'resources', 'nodes', 'count'],
      message: "resources.nodes cannot set both 'indices' and 'count'",
    },
  ],
  [
    'gpus without count or indices',
    one({ resources: { gpus: {} } }),
    { path: [...T, 'resources', 'gpus'], message: "resources.gpus requires 'count', 'indices', or both" },
  ],
  [
    'negative GPU index',
    one({ resources: { gpus: { indices: [0, -1] } } }),
    { path: [...T, 'resources', 'gpus', 'indices', 1], message: 'must be >= 0, got -1' },
  ],
  [
    'duplicate GPU index',
    one({ resources: { gpus: { indices: [1, 1] } } }),
    {
      path: [...T, 'resources', 'gpus', 'indices', 1],
      message: 'resources.gpus.indices contains GPU 1 more than once',
    },
  ],
  [
    'empty GPU indices',
    one({ resources: { gpus: { indices: [] } } }),
    { path: [...T, 'resources', 'gpus', 'indices'], message: 'resources.gpus.indices must not be empty' },
  ],
  [
    'GPU indices as plain text',
    one({ resources: { gpus: { indices: '0,1' } } }),
    {
      path: [...T, 'resources', 'gpus', 'indices'],
      message: "expected a list of integers or a ${{ }} expression for 'indices', got string '0,1'",
    },
  ],
  [
    'release_after value',
    one({ resources: { gpus: { count: 1, release_after: 'never' } } }),
    {
      path: [...T, 'resources', 'gpus', 'release_after'],
      message: "expected one of 'workflow_completion', 'task_ready', 'task_completion', got string 'never'",
    },
  ],
  [
    'unknown resources key',
    one({ resources: { gpu: { count: 1 } } }),
    {
      path: [...T, 'resources', 'gpu'],
      message: "unknown key 'gpu' in resources",
      hint: "did you mean 'gpus'?",
    },
  ],
];

describe('rejections in the workflow and its tasks', () => {
  it.each(CASES)('%s', (_name, doc, expected) => {
    expect(findIssue(doc, expected)).toBeTruthy();
  });
});

describe('a typo in a key', () => {
  it('is reported first, at the typo, without the echo "missing required key" it causes', () => {
    const r = validateRecipe(recipe({}, [{ name: 'a', scirpt: ['x'] }]));
    expect(r.ok ? [] : r.issues).toEqual([
      {
        path: [...T, 'scirpt'],
        message: "unknown key 'scirpt' in task",
        hint: "did you mean 'script'?",
        atKey: true,
      },
    ]);
  });

  it('comes before other problems, which are still reported', () => {
    const r = validateRecipe(recipe({}, [{ name: 'a', script: 5, depnds_on: ['b'] }]));
    const issues = r.ok ? [] : r.issues;
    expect(issues[0]).toMatchObject({ path: [...T, 'depnds_on'], hint: "did you mean 'depends_on'?" });
    expect(issues.slice(1).map((i) => i.path)).toContainEqual([...T, 'script']);
  });
});

describe('timeout', () => {
  it('is accepted on workflow and task without a load warning (the run enforces or warns)', () => {
    const r = validateRecipe(recipe({}, [task({ timeout: 60 })], { timeout: '2h' }));
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    expect(r.recipe.workflow.timeout).toBe('2h');
    expect(r.recipe.workflow.tasks[0].timeout).toBe(60);
    expect(r.warnings).toEqual([]);
  });
});
