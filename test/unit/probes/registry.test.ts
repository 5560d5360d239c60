/**
 * The probe registry (src/probes/registry.ts) is the one list of probe kinds: the recipe schema,
 * the planner, `--dry-run`, the events' descriptions and the checks all read it, and a kind it
 * does not hold is an error everywhere, never taken for another kind.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backendCatalog } from '../../../src/backends/registry.js';
import { SflowError } from '../../../src/config/errors.js';
import { loadRecipe } from '../../../src/config/load.js';
import { PROBE_TYPES, recipeJsonSchema } from '../../../src/config/schema/index.js';
import { buildPlan } from '../../../src/plan/build.js';
import { renderDryRun } from '../../../src/plan/render.js';
import type { Plan, PlannedProbe } from '../../../src/plan/types.js';
import { createProbeCheck } from '../../../src/probes/probe-adapter.js';
import { describeProbe, PROBE_KIND_NAMES, PROBE_KINDS, probeKind } from '../../../src/probes/registry.js';
import { scratchDir } from '../../helpers/scratch.js';

const dir = scratchDir('sflow-probe-registry-');
let n = 0;

function load(probes: string) {
  const file = join(dir, `r${++n}.yaml`);
  writeFileSync(
    file,
    `workflow:\n  name: w\n  tasks:\n    - name: srv\n      script:\n        - echo hi\n      probes:\n${probes}`,
  );
  return loadRecipe({ files: [file] });
}

function plan(probes: string): { plan: Plan; loaded: ReturnType<typeof load> } {
  const loaded = load(probes);
  return {
    loaded,
    plan: buildPlan(loaded, { dryRun: true, runId: 'run-1', workspaceDir: dir, catalog: backendCatalog }),
  };
}

function planError(probes: string): SflowError {
  try {
    plan(probes);
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    return e as SflowError;
  }
  throw new Error('expected a plan error');
}

describe('the probe registry', () => {
  it('holds each kind under its own name, and the schema lists exactly those', () => {
    for (const [key, kind] of Object.entries(PROBE_KINDS)) expect(kind.name).toBe(key);
    expect([...PROBE_TYPES]).toEqual(PROBE_KIND_NAMES);
    const json = JSON.stringify(recipeJsonSchema());
    for (const name of PROBE_KIND_NAMES) expect(json).toContain(`"${name}"`);
  });

  it('refuses a kind it does not hold, in planning, --dry-run and checks alike', () => {
    expect(() => probeKind('tcp')).toThrow("unknown probe kind 'tcp'");
    const { plan: p, loaded } = plan('        readiness:\n          log_watch: {regex_pattern: up}\n');
    const probe = p.tasks[0].probes.readiness[0];
    expect(renderDryRun(p, loaded)).toContain('readiness: log_watch "up" in srv.log');
    // a planned probe whose kind is not registered (a bug) is never printed as another kind
    const bogus = { ...probe, kind: 'bogus' } as unknown as PlannedProbe;
    p.tasks[0].probes.readiness[0] = bogus;
    expect(() => renderDryRun(p, loaded)).toThrow("unknown probe kind 'bogus'");
    expect(() => describeProbe(bogus)).toThrow("unknown probe kind 'bogus'");
    expect(() =>
      createProbeCheck(bogus, { task: { name: 'srv', env: {}, outputDir: dir }, logPath: '/dev/null' }),
    ).toThrow("unknown probe kind 'bogus'");
  });

  it('plans a pattern JavaScript cannot compile as a located plan error, before anything runs', () => {
    const lw = planError(
      '        readiness:\n          log_watch:\n            regex_pattern: "re:(unclosed"\n',
    );
    expect(lw.code).toBe('plan.probe_pattern');
    expect(lw.phase).toBe('plan');
    expect(lw.message).toContain('"re:(unclosed"');
    expect(lw.location?.line).toBe(10);
    const body = planError(
      '        readiness:\n          http_get:\n            url: http://127.0.0.1:1/\n            body_match: "re:[z-a]"\n',
    );
    expect(body.code).toBe('plan.probe_pattern');
    expect(body.location?.line).toBe(11);
  });

  it('names the registered kinds when a probe has none', () => {
    const e = planError('        readiness:\n          delay: 1\n');
    expect(e.message).toContain('Exactly one probe type must be specified');
    expect(e.hint).toContain(PROBE_KIND_NAMES.join(', '));
  });
});
