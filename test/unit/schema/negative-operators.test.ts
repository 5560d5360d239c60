/** One focused rejection per rule: operators, task-level operator overrides, storage and uploads. */
import { describe, expect, it } from 'vitest';
import { validateOperatorOverride } from '../../../src/config/schema/index.js';
import { findIssue, recipe, task, type Expected } from './helpers.js';

type Case = [string, unknown, Expected];

const srun = (extra: object = {}) => ({ name: 'op', type: 'srun', ...extra });

const CASES: Case[] = [
  // operators
  [
    'operator type docker',
    recipe({ operators: [{ name: 'o', type: 'docker', image: 'x' }] }),
    {
      path: ['operators', 0, 'type'],
      message: /^Operator type 'docker' is not valid; use `type: docker_run`/,
    },
  ],
  [
    'unknown operator type',
    recipe({ operators: [{ name: 'o', type: 'srum' }] }),
    {
      path: ['operators', 0, 'type'],
      message: "unknown operator type 'srum'",
      hint: /^did you mean 'srun'\? valid operator types: bash, srun, docker_run, k8s, k8s_mpi, python, ssh$/,
    },
  ],
  [
    'srun key typo',
    recipe({ operators: [srun({ ntask: 2 })] }),
    {
      path: ['operators', 0, 'ntask'],
      message: "unknown key 'ntask' in srun operator",
      hint: "did you mean 'ntasks'?",
    },
  ],
  [
    'srun image and name',
    recipe({ operators: [srun({ container_image: 'i', container_name: 'n' })] }),
    {
      path: ['operators', 0, 'container_name'],
      message: "srun operator 'op': 'container_image' and 'container_name' cannot both be set",
    },
  ],
  [
    'bash has no fields',
    recipe({ operators: [{ name: 'b', type: 'bash', image: 'x' }] }),
    { path: ['operators', 0, 'image'], message: "unknown key 'image' in bash operator" },
  ],
  [
    'namespace on a k8s operator',
    recipe({ operators: [{ name: 'k', type: 'k8s', image: 'i', namespace: 'n' }] }),
    {
      path: ['operators', 0, 'namespace'],
      message: "unknown key 'namespace' in k8s operator",
      hint: /belongs to the kubernetes backend/,
    },
  ],
  [
    'bad k8s_mpi route',
    recipe({ operators: [{ name: 'm', type: 'k8s_mpi', image: 'i', mpi: { route: 'podz' } }] }),
    {
      path: ['operators', 0, 'mpi', 'route'],
      message: "expected one of 'auto', 'operator', 'pods' or a ${{ }} expression, got string 'podz'",
    },
  ],
  [
    'ssh without host',
    recipe({ operators: [{ name: 's', type: 'ssh' }] }),
    { path: ['operators', 0, 'host'], message: "missing required key 'host'" },
  ],
  [
    'srun bool field',
    recipe({ operators: [srun({ exclusive: 'sure' })] }),
    {
      path: ['operators', 0, 'exclusive'],
      message: "expected true/false or a ${{ }} expression, got string 'sure'",
    },
  ],
  [
    'task operator override typo',
    recipe({ operators: [srun()] }, [task({ operator: { name: 'op', ntask: 2 } })]),
    {
      path: ['workflow', 'tasks', 0, 'operator', 'ntask'],
      message: "task 'a' operator override: unknown key 'ntask' in srun operator",
      hint: "did you mean 'ntasks'?",
    },
  ],
  // storage and uploads
  [
    'unknown storage type',
    recipe({ storage: [{ name: 's', type: 'gcs', bucket: 'b' }] }),
    { path: ['storage', 0, 'type'], message: "unknown storage type 'gcs'", hint: /valid storage types: s3/ },
  ],
  [
    'upload to undeclared target',
    recipe({}, [task({ uploads: [{ target: 'nope', from: 'x' }] })]),
    {
      path: ['workflow', 'tasks', 0, 'uploads', 0, 'target'],
      message: "Task 'a' upload references unknown storage target 'nope'",
      hint: /top-level 'storage:'/,
    },
  ],
  [
    'glob upload to a file key',
    recipe({ storage: [{ name: 's', type: 's3', bucket: 'b' }] }, [
      task({ uploads: [{ target: 's', from: '*.csv', to: 'out.csv' }] }),
    ]),
    {
      path: ['workflow', 'tasks', 0, 'uploads', 0, 'to'],
      message: /must end with '\/' when 'from' is a glob/,
    },
  ],
  [
    'upload escaping with ..',
    recipe({ storage: [{ name: 's', type: 's3', bucket: 'b' }] }, [
      task({ uploads: [{ target: 's', from: 'x', to: '../x' }] }),
    ]),
    {
      path: ['workflow', 'tasks', 0, 'uploads', 0, 'to'],
      message: "upload 'to' must not contain '..' segments, got '../x'",
    },
  ],
  [
    'upload on_error',
    recipe({ storage: [{ name: 's', type: 's3', bucket: 'b' }] }, [
      task({ uploads: [{ target: 's', from: 'x', on_error: 'ignore' }] }),
    ]),
    {
      path: ['workflow', 'tasks', 0, 'uploads', 0, 'on_error'],
      message: "expected one of 'warn', 'fail', got string 'ignore'",
    },
  ],
  [
    'upload_all to undeclared target',
    recipe({}, [task()], { upload_all: { target: 'bucket' } }),
    {
      path: ['workflow', 'upload_all', 'target'],
      message: "workflow.upload_all references unknown storage target 'bucket'",
    },
  ],
];

describe('rejections: operators and storage', () => {
  it.each(CASES)('%s', (_name, doc, expected) => {
    expect(findIssue(doc, expected)).toBeTruthy();
  });
});

describe('validateOperatorOverride', () => {
  it('accepts a merged srun config and reports a misspelt field', () => {
    expect(validateOperatorOverride('srun', { name: 'op', ntasks: 4, extra_args: ['--x'] })).toEqual([]);
    const [i] = validateOperatorOverride('srun', { name: 'op', ntsks: 4 });
    expect(i).toMatchObject({
      path: ['ntsks'],
      message: "unknown key 'ntsks' in srun operator",
      hint: "did you mean 'ntasks'?",
      atKey: true,
    });
  });
  it('checks value types of the merged config', () => {
    const [i] = validateOperatorOverride('ssh', { name: 's', host: 'h', port: 'x' });
    expect(i).toMatchObject({
      path: ['port'],
      message: "expected an integer or a ${{ }} expression, got string 'x'",
    });
  });
  it('rejects an unknown operator type', () => {
    const [i] = validateOperatorOverride('dockr_run', { name: 'x' });
    expect(i.message).toBe("unknown operator type 'dockr_run'");
    expect(i.hint).toMatch(/did you mean 'docker_run'\?/);
  });
});
