import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SflowError } from '../../../src/config/errors.js';
import { parseYamlText, readYamlFile } from '../../../src/config/yaml-load.js';
import { YAML_LIMITS } from '../../../src/config/yaml-limits.js';
import { scratchDir } from '../../helpers/scratch.js';

function fails(text: string): SflowError {
  try {
    parseYamlText(text, 'r.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    return e as SflowError;
  }
  throw new Error('expected a load error');
}

describe('YAML limits', () => {
  it('counts alias uses and the values they expand to, at the alias', () => {
    let bomb = 'a0: &a0 [x, x, x, x, x, x, x, x, x]\n';
    for (let i = 1; i <= 8; i++)
      bomb += `a${i}: &a${i} [${Array(9)
        .fill(`*a${i - 1}`)
        .join(', ')}]\n`;
    const e = fails(bomb);
    expect(e.code).toBe('config.yaml_aliases');
    expect(e.location?.line).toBeGreaterThan(1);
    const wide = fails(
      `a: &a [${Array(60_000).fill('1').join(',')}]\nb: [${Array(10).fill('*a').join(',')}]\n`,
    );
    expect(wide.message).toContain(`more than ${YAML_LIMITS.maxNodes} values`);
    expect(wide.location?.line).toBe(2);
    // ordinary aliases are fine
    expect(parseYamlText('a: &a {x: 1}\nb: *a\nc: *a\n', 'r.yaml').value).toEqual({
      a: { x: 1 },
      b: { x: 1 },
      c: { x: 1 },
    });
  });

  it('refuses deep nesting of every kind before the YAML library recurses', () => {
    expect(fails(`x: ${'['.repeat(101)}${']'.repeat(101)}\n`).location).toEqual({
      file: 'r.yaml',
      line: 1,
      col: 104,
    });
    expect(fails(`x:\n  ${'- '.repeat(500)}z\n`).code).toBe('config.yaml_depth');
    expect(fails(`x:\n${' '.repeat(1001)}y: 1\n`).code).toBe('config.yaml_depth');
    let nested = '';
    for (let i = 0; i < 250; i++) nested += `${' '.repeat(i)}k:\n`;
    expect(fails(nested).message).toContain(`more than ${YAML_LIMITS.maxDepth} levels`);
  });

  it('refuses documents with too many tokens, and files larger than the cap without reading them whole', () => {
    expect(fails(`x: [${Array(YAML_LIMITS.maxTokens).fill('1').join(',')}]\n`).code).toBe(
      'config.too_complex',
    );
    const f = join(scratchDir('sflow-yaml-limits-'), 'big.yaml');
    writeFileSync(f, `x: 1\n#${'x'.repeat(YAML_LIMITS.maxBytes)}\n`);
    let e: unknown;
    try {
      readYamlFile(f);
    } catch (err) {
      e = err;
    }
    expect((e as SflowError).code).toBe('config.too_large');
    expect((e as SflowError).location).toEqual({ file: f, line: 1, col: 1 });
  });
});
