import { describe, expect, it } from 'vitest';
import { SflowError } from '../../../src/config/errors.js';
import { toNative, type Scope } from '../../../src/config/expr/index.js';
import { resolveVariables, type RawVariable } from '../../../src/config/variables.js';

const raw = (name: string, value: unknown, type?: string): RawVariable => ({
  name,
  value,
  type,
  where: { doc: {}, path: ['variables', name] },
  docItem: {},
});

/** extras whose `probe.x` counts how often an expression reads it */
function counter(): { extras: Scope; reads: () => number } {
  let n = 0;
  const probe = {};
  Object.defineProperty(probe, 'x', { enumerable: true, get: () => (n++, '') });
  return { extras: { probe }, reads: () => n };
}

const values = (m: Map<string, { value: unknown }>) =>
  Object.fromEntries([...m].map(([k, v]) => [k, toNative(v.value as never)]));

describe('variable resolution', () => {
  it('evaluates a chain once per variable, whatever the declaration order', () => {
    const N = 3_000;
    const { extras, reads } = counter();
    const vars = [raw('V0', 'a')];
    // declared last-first: each reads the one declared after it
    for (let i = N - 1; i >= 1; i--) vars.push(raw(`V${i}`, `\${{ probe.x ~ V${i - 1} }}`));
    const out = resolveVariables(vars, new Map(), extras);
    expect(out.get(`V${N - 1}`)?.value).toBe('a');
    expect(reads()).toBe(N - 1);
  });

  it('still resolves values read through variables[...]', () => {
    const out = resolveVariables(
      [raw('A', "${{ variables['B'] ~ '!' }}"), raw('B', '${{ C }}'), raw('C', '${{ 2 + 3 }}', 'integer')],
      new Map(),
      {},
    );
    expect(values(out)).toMatchObject({ A: '5!', B: '5', C: 5 });
  });

  it('reports a cycle with every name, and an evaluation error at the variable that causes it', () => {
    const cycle = () => resolveVariables([raw('A', '${{ B }}'), raw('B', '${{ A }}')], new Map(), {});
    expect(cycle).toThrow('Unresolved variable expressions (missing refs or cycle): A, B');
    let e: unknown;
    try {
      resolveVariables(
        [raw('X', '${{ Y }}'), raw('Y', "${{ 'a' * 100000000 }}"), raw('Z', '${{ X }}')],
        new Map(),
        {},
      );
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(SflowError);
    expect((e as SflowError).message).toContain('X, Y, Z');
    expect((e as SflowError).hint).toContain('result too large');
  });

  it('refuses an integer-typed value beyond 2^53 instead of rounding it', () => {
    expect(() => resolveVariables([raw('N', '99999999999999999999', 'integer')], new Map(), {})).toThrow(
      /expected integer within ±2\^53/,
    );
  });

  it('names at most a dozen of many unresolved variables', () => {
    const vars = Array.from({ length: 50 }, (_, i) => raw(`V${i}`, `\${{ V${(i + 1) % 50} }}`));
    expect(() => resolveVariables(vars, new Map(), {})).toThrow(/… \(50 in all\)$/);
  });
});
