/**
 * The planner reads what a backend can do from its registry entry, never from its type name
 * (issue 7): the same recipe planned through a catalog whose kinds say otherwise plans otherwise.
 * Checked for `docker_run`'s `--rm` (capability `removesContainers`) and the not-yet table's
 * backend rows (capability `notYet`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BACKEND_KINDS, backendCatalog } from '../../../src/backends/registry.js';
import { loadRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';
import { findNotYet, NOT_YET } from '../../../src/plan/not-yet.js';
import type { BackendCapabilities, BackendCatalog, Plan } from '../../../src/plan/types.js';
import { scratchDir } from '../../helpers/scratch.js';

const dir = scratchDir('sflow-capabilities-');
let n = 0;

/** the registry, with the capabilities of one type changed */
const changed =
  (type: string, over: Partial<BackendCapabilities>): BackendCatalog =>
  (t) => {
    const traits = backendCatalog(t);
    return traits && t === type ? { ...traits, capabilities: { ...traits.capabilities, ...over } } : traits;
  };

function plan(yaml: string, catalog: BackendCatalog = backendCatalog) {
  const file = join(dir, `r${++n}.yaml`);
  writeFileSync(file, yaml);
  const loaded = loadRecipe({ files: [file] });
  const p: Plan = buildPlan(loaded, { dryRun: true, runId: 'run-1', workspaceDir: dir, catalog });
  return { plan: p, loaded };
}

const dockerRunOn = (type: string) =>
  `backends:\n  - name: b\n    type: ${type}\n    default: true\n` +
  'operators:\n  - name: c\n    type: docker_run\n    image: img:1\n' +
  'workflow:\n  name: w\n  tasks:\n    - name: a\n      operator: c\n      script: [echo hi]\n';

describe('docker_run --rm follows removesContainers', () => {
  const rm = (catalog?: BackendCatalog, type = 'local') =>
    plan(dockerRunOn(type), catalog).plan.tasks[0].argv.includes('--rm');

  it('local (does not remove containers): --rm; docker (removes them itself): none', () => {
    expect(rm()).toBe(true);
    expect(rm(undefined, 'docker')).toBe(false);
  });

  it('the same types with the capability flipped plan the other way', () => {
    expect(rm(changed('local', { removesContainers: true }))).toBe(false);
    expect(rm(changed('docker', { removesContainers: false }), 'docker')).toBe(true);
  });
});

describe("the not-yet table's backend rows follow the kind's notYet", () => {
  const recipe = (hosts: string) =>
    'backends:\n  - name: d\n    type: docker\n    image: x\n    default: true\n    include_nodes: [a]\n' +
    hosts +
    'workflow:\n  name: w\n  tasks:\n    - name: a\n      script: [echo hi]\n';
  const oneEngine = recipe('');
  const rows = (yaml: string, catalog?: BackendCatalog) =>
    findNotYet({ ...plan(yaml, catalog), options: {} }).map((f) => `${f.row.id}: ${f.what}`);

  it('docker names its rows: each use is found (node filters only without hosts:)', () => {
    expect(rows(oneEngine)).toEqual(["local-node-filters: backend 'd' include_nodes"]);
    expect(rows(recipe('    hosts:\n      - {name: a, address: h1}\n'))).toEqual([]);
  });

  it('a kind that names none of them gets none, whatever its type', () => {
    expect(rows(oneEngine, changed('docker', { notYet: [] }))).toEqual([]);
    expect(rows(oneEngine, changed('docker', { notYet: ['local-node-filters'] }))).toEqual([
      "local-node-filters: backend 'd' include_nodes",
    ]);
  });

  it('every row a kind names is a row of the table (delete it from the kind when the row goes)', () => {
    const ids = new Set(NOT_YET.map((r) => r.id));
    for (const k of Object.values(BACKEND_KINDS))
      expect(
        k.capabilities.notYet.filter((id) => !ids.has(id)),
        k.type,
      ).toEqual([]);
  });
});
