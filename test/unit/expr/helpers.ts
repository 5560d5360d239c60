import {
  DomainValue,
  ExprSyntaxError,
  compileTemplate,
  evaluateTemplate,
  renderTemplate,
  type Scope,
  type Value,
} from '../../../src/config/expr/index.js';

/** A scope shaped like the one the resolver builds (spec config.md 3.3). */
export function sampleScope(): Scope {
  const variables: Record<string, Value> = {
    X: '4',
    N: 4,
    TP: 4,
    PP: 1,
    WORKERS: 2,
    GPUS_TOTAL: 16,
    GPUS_PER_WORKER: 8,
    C: new DomainValue(8, [4, 8, 16]),
    EMPTY: '',
  };
  const node = (i: number): Value => ({
    name: i === 0 ? 'localhost' : `localhost-${i}`,
    ip_address: '127.0.0.1',
    index: i,
    num_gpus: 4,
  });
  return {
    ...variables,
    variables,
    backends: { box: { name: 'box', nodes: [node(0), node(1), node(2)] } },
    artifacts: { RUN_CONFIG: { uri: 'file:///tmp/run.json', path: '/tmp/run.json' } },
    workflow: { name: 'expressions' },
    task: {
      w: [
        {
          nodes: [{ name: 'localhost', ip_address: '127.0.0.1', index: 0, num_gpus: null }],
          gpus: [0],
          backend: 'box',
          operator: 'bash',
        },
        {
          nodes: [{ name: 'localhost', ip_address: '127.0.0.1', index: 0, num_gpus: null }],
          gpus: [1, 2],
          backend: 'box',
          operator: 'bash',
        },
      ],
    },
  };
}

/** Renders a template against a scope (the sample scope by default). */
export function r(src: string, scope: Scope = sampleScope()): string {
  return renderTemplate(compileTemplate(src), scope);
}

/** Renders the single expression `${{ expr }}`. */
export function e(expr: string, scope: Scope = sampleScope()): string {
  return r('${{ ' + expr + ' }}', scope);
}

/** Evaluates the single expression `${{ expr }}` to its native value. */
export function v(expr: string, scope: Scope = sampleScope()): Value {
  return evaluateTemplate(compileTemplate('${{ ' + expr + ' }}'), scope);
}

/** The error thrown by `fn` (fails the test when nothing is thrown). */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an exception');
}

/** What compiling `template` is refused with: the first line of the message, the offset, the part. */
export function syntaxError(template: string): { message: string; offset: number; expression: string } {
  const err = thrown(() => compileTemplate(template));
  if (!(err instanceof ExprSyntaxError)) throw new Error(`expected an ExprSyntaxError, got ${String(err)}`);
  return { message: err.message.split('\n')[0], offset: err.offset, expression: err.expression };
}
