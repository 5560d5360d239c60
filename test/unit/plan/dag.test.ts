/**
 * The task graph (src/plan/dag.ts): the loop a cycle check finds and how its error spells it,
 * the concrete edges between replicas (spec config.md §5.7) and the topological order with ties
 * broken by declaration order. Pure functions on small hand-made graphs.
 */
import { describe, expect, it } from 'vitest';
import {
  concreteDependencies,
  cycleError,
  findCycle,
  topologicalOrder,
  type BaseTask,
} from '../../../src/plan/dag.js';

function task(name: string, dependsOn: string[] = [], extra: Partial<BaseTask> = {}): BaseTask {
  return { name, dependsOn, policy: 'parallel', instances: [name], ...extra };
}

describe('findCycle', () => {
  it('finds none in a graph without loops, diamonds and unknown names included', () => {
    const tasks = [
      task('a'),
      task('b', ['a']),
      task('c', ['a']),
      task('d', ['b', 'c', 'elsewhere']),
      task('e', ['d', 'a']),
    ];
    expect(findCycle(tasks)).toBeNull();
    expect(findCycle([])).toBeNull();
  });

  it('spells a loop from where it closes, its first task repeated at the end', () => {
    // a -> b -> c -> b: the loop is b, c, b (a only leads into it)
    const tasks = [task('a', ['b']), task('b', ['c']), task('c', ['b'])];
    expect(findCycle(tasks)).toEqual(['b', 'c', 'b']);
  });

  it('finds a task that depends on itself', () => {
    expect(findCycle([task('x'), task('self', ['self'])])).toEqual(['self', 'self']);
  });

  it('finds a loop that only a later task of the declaration order enters', () => {
    const tasks = [task('ok1'), task('ok2', ['ok1']), task('p', ['q']), task('q', ['r']), task('r', ['p'])];
    expect(findCycle(tasks)).toEqual(['p', 'q', 'r', 'p']);
  });

  it('does not mistake a task finished on another path for a loop', () => {
    // d is reached twice (through b and through c): seen and done, not on the stack
    const tasks = [task('a', ['b', 'c']), task('b', ['d']), task('c', ['d']), task('d')];
    expect(findCycle(tasks)).toBeNull();
  });

  it('skips edges to tasks that are not declared', () => {
    expect(findCycle([task('a', ['ghost']), task('ghost2', ['a'])])).toBeNull();
  });
});

describe('cycleError', () => {
  it('names every edge of the loop, the tasks waiting behind it, and a hint', () => {
    const tasks = [
      task('p', ['q']),
      task('q', ['p']),
      task('after', ['p']),
      task('later', ['after']),
      task('free'),
    ];
    const e = cycleError(tasks, ['p', 'q', 'p'], { file: 'r.yaml', line: 3, col: 5 });
    expect(e.code).toBe('plan.cycle');
    expect(e.phase).toBe('plan');
    expect(e.location).toEqual({ file: 'r.yaml', line: 3, col: 5 });
    expect(e.message).toBe(
      "Dependency cycle: 'p' depends_on 'q', 'q' depends_on 'p'\n  Waiting behind it: after, later",
    );
    expect(e.hint).toBe('remove one depends_on (or required_by) edge of the loop');
  });

  it('says a task cannot depend on itself, and lists nobody when nothing waits', () => {
    const e = cycleError([task('self', ['self']), task('free')], ['self', 'self']);
    expect(e.message).toBe("Dependency cycle: 'self' depends_on 'self' (a task cannot depend on itself)");
    expect(e.location).toBeUndefined();
  });

  it('lists a task that waits on two tasks of the loop once', () => {
    const tasks = [task('a', ['b']), task('b', ['c']), task('c', ['a']), task('w', ['a', 'c'])];
    const e = cycleError(tasks, ['a', 'b', 'c', 'a']);
    expect(e.message).toBe(
      "Dependency cycle: 'a' depends_on 'b', 'b' depends_on 'c', 'c' depends_on 'a'\n  Waiting behind it: w",
    );
  });
});

describe('concreteDependencies', () => {
  it('gives every instance of a parallel task all instances of a parallel upstream', () => {
    const tasks = [
      task('up', [], { instances: ['up_0', 'up_1'] }),
      task('down', ['up', 'up'], { instances: ['down_0', 'down_1'] }),
    ];
    const d = concreteDependencies(tasks);
    expect(d.get('up_0')).toEqual([]);
    expect(d.get('up_1')).toEqual([]);
    expect(d.get('down_0')).toEqual(['up_0', 'up_1']); // a repeated depends_on counts once
    expect(d.get('down_1')).toEqual(['up_0', 'up_1']);
  });

  it('chains sequential replicas one after another; dependents wait for the last one', () => {
    const tasks = [
      task('pre'),
      task('seq', ['pre'], { policy: 'sequential', instances: ['seq_0', 'seq_1', 'seq_2'] }),
      task('post', ['seq']),
    ];
    const d = concreteDependencies(tasks);
    expect(d.get('seq_0')).toEqual(['pre']);
    expect(d.get('seq_1')).toEqual(['seq_0']);
    expect(d.get('seq_2')).toEqual(['seq_1']);
    expect(d.get('post')).toEqual(['seq_2']);
  });

  it('drops edges to tasks that are not declared', () => {
    const d = concreteDependencies([task('a', ['missing'])]);
    expect(d.get('a')).toEqual([]);
  });
});

describe('topologicalOrder', () => {
  it('puts every task after what it depends on, ties in declaration order', () => {
    const names = ['z', 'y', 'x', 'w'];
    const deps = new Map([
      ['z', ['x']],
      ['y', []],
      ['x', []],
      ['w', ['y', 'x']],
    ]);
    // ready at first: y, x (declaration order); x frees z, y and x free w
    expect(topologicalOrder(names, deps)).toEqual(['y', 'x', 'z', 'w']);
  });

  it('orders the tasks one task frees by where they were declared, not by edge order', () => {
    const names = ['root', 'c', 'b', 'a'];
    const deps = new Map([
      ['a', ['root']],
      ['b', ['root']],
      ['c', ['root']],
    ]);
    expect(topologicalOrder(names, deps)).toEqual(['root', 'c', 'b', 'a']);
  });

  it('waits for the last of several upstreams', () => {
    const names = ['late', 'a', 'b', 'c'];
    const deps = new Map([
      ['late', ['a', 'b', 'c']],
      ['b', ['a']],
    ]);
    expect(topologicalOrder(names, deps)).toEqual(['a', 'c', 'b', 'late']);
  });

  it('leaves out what a loop holds back, and keeps a chain in order', () => {
    const loop = new Map([
      ['p', ['q']],
      ['q', ['p']],
    ]);
    expect(topologicalOrder(['free', 'p', 'q'], loop)).toEqual(['free']);
    const chain = new Map([
      ['c', ['b']],
      ['b', ['a']],
    ]);
    expect(topologicalOrder(['c', 'b', 'a'], chain)).toEqual(['a', 'b', 'c']);
  });
});
