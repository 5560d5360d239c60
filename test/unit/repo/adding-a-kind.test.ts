/**
 * docs/adding-a-backend.md and docs/adding-a-probe.md each list, in one table, every file a new
 * kind touches. This test reads the registries (BACKEND_KINDS, PROBE_KINDS) and checks each table
 * against them: the table names exactly the places the test knows how to check, every registered
 * kind has each of them (folder or module, tests, schema, conformance suite, docs), and each
 * registry line has the documented shape and imports the kind from the documented file.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BACKEND_KINDS } from '../../../src/backends/registry.js';
import { BackendSchema } from '../../../src/config/schema/backends.js';
import { BACKEND_TYPES } from '../../../src/config/schema/index.js';
import { PROBE_KINDS } from '../../../src/probes/registry.js';
import { REPO } from '../../helpers/cli.js';

const read = (rel: string) => readFileSync(join(REPO, rel), 'utf8');

/** first cells of the table after "Everything a new … touches" */
function touchedPlaces(doc: string): string[] {
  const text = read(doc);
  const start = text.indexOf('touches, all of it:');
  expect(start, `${doc}: the "Everything a new … touches, all of it:" table`).toBeGreaterThan(0);
  const rows = text.slice(start).split('\n').slice(1);
  const out: string[] = [];
  for (const row of rows.slice(rows.findIndex((r) => r.startsWith('|')))) {
    if (!row.startsWith('|')) break;
    const cell = row.split('|')[1].trim();
    if (cell === 'where' || /^-+$/.test(cell)) continue;
    out.push(cell.replace(/^`(.*)`$/, '$1'));
  }
  return out;
}

/** `<key>: <ident>,` lines of one `export const NAME = { … }` block, and where each ident is imported from */
function registryLines(
  file: string,
  block: string,
): { lines: Map<string, string>; from: Map<string, string> } {
  const text = read(file);
  const body = text.slice(text.indexOf(`export const ${block}`));
  const lines = new Map(
    [...body.slice(0, body.indexOf('};')).matchAll(/^ {2}(\w+): (\w+),$/gm)].map((m) => [m[1], m[2]]),
  );
  const from = new Map<string, string>();
  for (const m of text.matchAll(/^import \{([^}]+)\} from '([^']+)';$/gm))
    for (const name of m[1].split(',').map((s) => s.trim()))
      if (name && !name.startsWith('type ')) from.set(name, m[2]);
  return { lines, from };
}

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? testFiles(p) : /\.tsx?$/.test(e) ? [p] : [];
  });
}

describe('docs/adding-a-probe.md', () => {
  const places = touchedPlaces('docs/adding-a-probe.md');
  const { lines, from } = registryLines('src/probes/registry.ts', 'PROBE_KINDS');

  it('lists exactly the places this test checks', () => {
    expect(places).toEqual([
      'src/probes/kinds/<module>.ts',
      'src/probes/registry.ts',
      'test/unit/probes/<module>.test.ts',
      'docs/recipes.md',
      'assets/skills/sflow-recipes/SKILL.md',
    ]);
  });

  it('every registered kind has its registry line, module and tests', async () => {
    expect([...lines.keys()]).toEqual(Object.keys(PROBE_KINDS));
    for (const [key, ident] of lines) {
      const spec = from.get(ident);
      const module = /^\.\/kinds\/([\w-]+)\.js$/.exec(spec ?? '')?.[1];
      expect(module, `${key}: ${ident} is imported from ./kinds/<module>.js (got ${spec})`).toBeDefined();
      expect(ident, `${key}: the line reads '${key}: <module>Probe,'`).toMatch(/Probe$/);
      const source = `src/probes/kinds/${module}.ts`;
      expect(existsSync(join(REPO, source)), source).toBe(true);
      const exported = (await import(join(REPO, source))) as Record<string, unknown>;
      expect(exported[ident], `${source} exports ${ident}`).toBe(
        PROBE_KINDS[key as keyof typeof PROBE_KINDS],
      );
      expect(existsSync(join(REPO, `test/unit/probes/${module}.test.ts`)), `tests of ${key}`).toBe(true);
    }
  });

  it('the user docs name every kind', () => {
    const recipes = read('docs/recipes.md');
    const skill = read('assets/skills/sflow-recipes/SKILL.md');
    for (const key of Object.keys(PROBE_KINDS)) {
      expect(recipes, `docs/recipes.md names ${key}`).toMatch(new RegExp(`\\b${key}\\b`));
      expect(skill, `SKILL.md names ${key}`).toContain(`\`${key}\``);
    }
  });
});

describe('docs/adding-a-backend.md', () => {
  const places = touchedPlaces('docs/adding-a-backend.md');
  const { lines, from } = registryLines('src/backends/registry.ts', 'BACKEND_KINDS');

  it('lists exactly the places this test checks', () => {
    expect(places).toEqual([
      'src/backends/<name>/',
      'src/backends/registry.ts',
      'src/config/schema/backend-<name>.ts',
      'src/config/schema/backends.ts',
      'test/engines/<engine>/',
      'README "What runs today"',
    ]);
  });

  it('every registered type has its folder, registry line and schema in the union', () => {
    expect([...lines.keys()].sort()).toEqual(Object.keys(BACKEND_KINDS).sort());
    expect([...BACKEND_TYPES].sort()).toEqual(Object.keys(BACKEND_KINDS).sort());
    const backends = read('src/config/schema/backends.ts');
    for (const [type, ident] of lines) {
      expect(ident).toBe(`${type}Kind`);
      expect(from.get(ident)).toBe(`./${type}/kind.js`);
      expect(existsSync(join(REPO, `src/backends/${type}/kind.ts`)), `src/backends/${type}/`).toBe(true);
      const kind = BACKEND_KINDS[type as keyof typeof BACKEND_KINDS];
      expect(kind.type).toBe(type);
      expect(BackendSchema.options as readonly unknown[], `${type}: its settings are in the union`).toContain(
        kind.settings,
      );
      const own = `src/config/schema/backend-${type}.ts`;
      expect(
        existsSync(join(REPO, own)) || backends.includes(`type: z.literal('${type}')`),
        `${type}: its schema in ${own} or in backends.ts`,
      ).toBe(true);
    }
  });

  it('every type that runs has a conformance suite and a README row', () => {
    const suites = testFiles(join(REPO, 'test')).flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/describeBackendConformance\(\s*'([^']+)'/g)].map((m) => m[1]),
    );
    const readme = read('README.md');
    const today = readme.slice(
      readme.indexOf('## What runs today'),
      readme.indexOf('\n## ', readme.indexOf('## What runs today') + 1),
    );
    for (const kind of Object.values(BACKEND_KINDS)) {
      if (kind.create)
        expect(
          suites.some((s) => s.startsWith(kind.type)),
          `${kind.type}: conformance suite`,
        ).toBe(true);
      expect(today.toLowerCase(), `README "What runs today" row of ${kind.type}`).toContain(
        `| ${kind.capabilities.label.toLowerCase()} backend`,
      );
    }
  });
});
