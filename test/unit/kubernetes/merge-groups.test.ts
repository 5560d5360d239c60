/**
 * Kubernetes merge-pod planning (backends.md §5.3): `merge_colocated_gpu_pods` on/auto/off, and
 * the plan error for a member that reaches another member only through a task outside the pod.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backendCatalog } from '../../../src/backends/registry.js';
import { SflowError } from '../../../src/config/errors.js';
import { loadRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { Plan, PlannedTask } from '../../../src/plan/types.js';
import { scratchDir } from '../../helpers/scratch.js';

const dir = scratchDir('sflow-merge-pod-');
let n = 0;

/** a one-node, 4-GPU Kubernetes backend; `merge` is the field's YAML text, or absent */
function recipe(tasks: string, merge?: string, vars = ''): string {
  return (
    vars +
    'backends:\n' +
    '  - name: cluster\n' +
    '    type: kubernetes\n' +
    '    default: true\n' +
    '    namespace: default\n' +
    '    nodes: 1\n' +
    '    gpus_per_node: 4\n' +
    (merge === undefined ? '' : `    merge_colocated_gpu_pods: ${merge}\n`) +
    'operators:\n' +
    '  - name: gpu\n' +
    '    type: k8s\n' +
    '    image: img:1\n' +
    'workflow:\n' +
    '  name: w\n' +
    '  tasks:\n' +
    tasks
  );
}

/** a task on the `gpu` operator; gpus 0: CPU-only */
function task(name: string, gpus: number, deps: string[] = []): string {
  return (
    `    - name: ${name}\n` +
    '      operator: gpu\n' +
    (gpus ? `      resources:\n        gpus:\n          count: ${gpus}\n` : '') +
    (deps.length ? `      depends_on: [${deps.join(', ')}]\n` : '') +
    '      script:\n' +
    '        - echo hi\n'
  );
}

function write(yaml: string): string {
  const file = join(dir, `r${++n}.yaml`);
  writeFileSync(file, yaml);
  return file;
}

function plan(yaml: string): Plan {
  return buildPlan(loadRecipe({ files: [write(yaml)] }), {
    dryRun: true,
    runId: 'run-1',
    workspaceDir: dir,
    catalog: backendCatalog,
  });
}

function planError(yaml: string): { e: SflowError; file: string } {
  const file = write(yaml);
  try {
    buildPlan(loadRecipe({ files: [file] }), {
      dryRun: true,
      runId: 'run-1',
      workspaceDir: dir,
      catalog: backendCatalog,
    });
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    return { e: e as SflowError, file };
  }
  throw new Error('expected a plan error');
}

const byName = (p: Plan): Record<string, PlannedTask> => Object.fromEntries(p.tasks.map((t) => [t.name, t]));
/** 1-based line of the n-th (1-based) line containing `needle` */
const lineOf = (yaml: string, needle: string, nth = 1): number => {
  const lines = yaml.split('\n');
  let seen = 0;
  for (let i = 0; i < lines.length; i++) if (lines[i].includes(needle) && ++seen === nth) return i + 1;
  throw new Error(`no line with ${needle}`);
};

describe('merge-pod detour (member → non-member → member)', () => {
  it('is a plan error located at the depends_on of the member that takes the detour', () => {
    // a and b are 1-GPU tasks on the same node and image (merged); x is CPU-only (its own pod)
    const yaml = recipe(task('a', 1) + task('x', 0, ['a']) + task('b', 1, ['x']));
    const { e, file } = planError(yaml);
    expect(e.code).toBe('plan.merge_pod_detour');
    expect(e.phase).toBe('plan');
    expect(e.message).toBe(
      "task 'b' shares a merged pod with 'a' but reaches it only through 'x', which runs outside the pod; an in-pod gate can only wait for a member of the same pod",
    );
    expect(e.hint).toBe(
      "make 'b' depend on 'a' directly, or set merge_colocated_gpu_pods: off on the backend",
    );
    expect(e.location?.file).toBe(file);
    expect(e.location?.line).toBe(lineOf(yaml, 'depends_on: [x]'));
  });

  it('names the first task outside the pod on a longer detour', () => {
    const yaml = recipe(task('a', 1) + task('x', 0, ['a']) + task('y', 0, ['x']) + task('b', 1, ['y']));
    const { e } = planError(yaml);
    expect(e.code).toBe('plan.merge_pod_detour');
    expect(e.message).toContain("task 'b' shares a merged pod with 'a' but reaches it only through 'y'");
    expect(e.location?.line).toBe(lineOf(yaml, 'depends_on: [y]'));
  });

  it('is no error when the member also depends on the other directly (it is gated in the pod)', () => {
    const p = byName(plan(recipe(task('a', 1) + task('x', 0, ['a']) + task('b', 1, ['x', 'a']))));
    expect(p.b.colocated?.gatedOn).toEqual(['a']);
    expect(p.x.colocated).toBeUndefined();
  });

  it('is no error for a chain through members only: each member gates on its direct member deps', () => {
    const p = byName(plan(recipe(task('a', 1) + task('b', 1, ['a']) + task('c', 1, ['b']))));
    expect(p.a.colocated?.gatedOn).toEqual([]);
    expect(p.b.colocated?.gatedOn).toEqual(['a']);
    expect(p.c.colocated?.gatedOn).toEqual(['b']);
  });

  it('is no error with merge_colocated_gpu_pods: off (no pod is shared)', () => {
    const p = byName(plan(recipe(task('a', 1) + task('x', 0, ['a']) + task('b', 1, ['x']), 'off')));
    expect(p.a.colocated).toBeUndefined();
    expect(p.b.colocated).toBeUndefined();
  });
});

describe('merge_colocated_gpu_pods', () => {
  const two = task('a', 1) + task('b', 2);

  for (const [label, merge] of [
    ['unset (default auto)', undefined],
    ['auto', 'auto'],
    ['on', '"on"'],
    ['on (unquoted)', 'on'],
    ['true', 'true'],
  ] as const) {
    it(`${label}: same-node single-node GPU tasks with one image share one pod`, () => {
      const p = plan(recipe(two, merge));
      const t = byName(p);
      expect(t.a.colocated).toEqual({
        group: 'g1',
        members: ['a', 'b'],
        gatedOn: [],
        launch: [t.a.launch[0], t.b.launch[0]],
        gpus: 3,
      });
      expect(t.b.colocated).toMatchObject({ group: 'g1', members: ['a', 'b'], gpus: 3 });
      // each member sees all the pod's GPUs, its own listed first
      expect(t.a.env.CUDA_VISIBLE_DEVICES).toBe('0,1,2');
      expect(t.b.env.CUDA_VISIBLE_DEVICES).toBe('1,2,0');
      expect(t.b.launch[0].env.CUDA_VISIBLE_DEVICES).toBe('1,2,0');
      const notes = p.backends.find((b) => b.name === 'cluster')!.notes;
      expect(notes).toEqual([expect.stringMatching(/^merged pod g1 on \S+ \(3 GPU\(s\)\): a, b$/)]);
    });
  }

  for (const [label, merge] of [
    ['off', 'off'],
    ['false', 'false'],
  ] as const) {
    it(`${label}: every task keeps its own pod and the backend says so`, () => {
      const p = plan(recipe(two, merge));
      const t = byName(p);
      expect(t.a.colocated).toBeUndefined();
      expect(t.b.colocated).toBeUndefined();
      expect(p.backends.find((b) => b.name === 'cluster')!.notes).toEqual([
        'merge_colocated_gpu_pods: off (every task has its own pod)',
      ]);
    });
  }

  it('off from an expression is off', () => {
    const vars = 'variables:\n  MERGE:\n    value: "off"\n';
    const t = byName(plan(recipe(two, '${{ variables.MERGE }}', vars)));
    expect(t.a.colocated).toBeUndefined();
  });

  it('on: CPU-only, retried and other-image tasks keep their own pods; a lone GPU task is not merged', () => {
    const yaml = recipe(
      task('a', 1) +
        task('b', 1) +
        task('cpu', 0) +
        task('retried', 1).replace(
          '      script:',
          '      retries:\n        count: 1\n        interval: 0\n      script:',
        ) +
        task('other', 1).replace('operator: gpu', 'operator: gpu2'),
      '"on"',
    ).replace('workflow:\n', '  - name: gpu2\n    type: k8s\n    image: img:2\nworkflow:\n');
    const t = byName(plan(yaml));
    expect(t.a.colocated?.members).toEqual(['a', 'b']);
    expect(t.cpu.colocated).toBeUndefined();
    expect(t.retried.colocated).toBeUndefined();
    expect(t.other.colocated).toBeUndefined();
  });

  it('on: a k8s_mpi task and a multi-node task keep their own pods', () => {
    const yaml = recipe(
      task('a', 1) +
        task('b', 1) +
        task('mpi', 1).replace('operator: gpu', 'operator: mpi') +
        task('wide', 2).replace('        gpus:', '        nodes:\n          count: 2\n        gpus:'),
      '"on"',
    )
      .replace('    nodes: 1\n', '    nodes: 2\n')
      .replace('workflow:\n', '  - name: mpi\n    type: k8s_mpi\n    image: img:1\nworkflow:\n');
    const t = byName(plan(yaml));
    expect(t.wide.nodes).toHaveLength(2);
    expect(t.mpi.nodes).toHaveLength(1);
    expect(t.a.colocated?.members).toEqual(['a', 'b']);
    expect(t.mpi.colocated).toBeUndefined();
    expect(t.wide.colocated).toBeUndefined();
  });
});
