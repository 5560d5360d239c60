/**
 * The log_watch probe kind from recipe to plan (src/probes/kinds/log-watch.ts): regex_pattern and
 * its alias match_pattern (one of them, not two different ones), match_count (default 1, an
 * expression resolved, refused below 1 or fractional), the watched task, the one-line
 * description and the --dry-run text.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backendCatalog } from '../../../src/backends/registry.js';
import { SflowError } from '../../../src/config/errors.js';
import { loadRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';
import { renderDryRun } from '../../../src/plan/render.js';
import { describeProbe } from '../../../src/probes/registry.js';
import { scratchDir } from '../../helpers/scratch.js';

const dir = scratchDir('sflow-kind-log-watch-');
let n = 0;

function planOf(probe: string) {
  const file = join(dir, `r${++n}.yaml`);
  writeFileSync(
    file,
    'variables:\n  N: 3\n  HALF: 1.5\n  ZERO: 0\nworkflow:\n  name: w\n  tasks:\n    - name: logger\n      script: [echo hi]\n' +
      `    - name: srv\n      script: [echo hi]\n      probes:\n        readiness:\n${probe}`,
  );
  const loaded = loadRecipe({ files: [file] });
  const plan = buildPlan(loaded, { dryRun: true, runId: 'r', workspaceDir: dir, catalog: backendCatalog });
  const srv = plan.tasks.find((t) => t.name === 'srv')!;
  const lines = renderDryRun(plan, loaded)
    .split('\n')
    .filter((l) => l.includes('log_watch'))
    .map((l) => l.trim());
  return { probe: srv.probes.readiness[0], lines };
}

function planFails(probe: string): SflowError {
  try {
    planOf(probe);
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    return e as SflowError;
  }
  throw new Error('expected a plan error');
}

const allText = (e: SflowError) => [e.message, ...(e.details ?? [])].join('\n');

describe('log_watch from recipe to plan', () => {
  it('watches its own log once by default; match_pattern is an alias', () => {
    const { probe, lines } = planOf('          - log_watch: {match_pattern: "ready"}\n');
    expect(probe).toMatchObject({ kind: 'log_watch', pattern: 'ready', matchCount: 1, logTask: 'srv' });
    expect(describeProbe(probe, 'srv')).toBe('log_watch "ready"');
    expect(lines[0]).toMatch(/^.*log_watch "ready" in srv\.log, match_count=1 \(/);
  });

  it('takes the same text under both names', () => {
    const { probe } = planOf('          - log_watch: {match_pattern: "up", regex_pattern: "up"}\n');
    expect(probe).toMatchObject({ pattern: 'up' });
  });

  it('resolves match_count and watches another task when told', () => {
    const { probe } = planOf(
      '          - log_watch: {regex_pattern: "re:^up$", match_count: "${{ variables.N }}", logger: logger}\n',
    );
    expect(probe).toMatchObject({ pattern: 're:^up$', matchCount: 3, logTask: 'logger' });
    expect(describeProbe(probe, 'srv')).toBe('log_watch "re:^up$" in logger x3');
    expect(describeProbe({ ...probe, matchCount: 1 } as typeof probe, 'logger')).toBe('log_watch "re:^up$"');
  });

  it('refuses two different patterns, and none', () => {
    const both = planFails('          - log_watch: {match_pattern: "a", regex_pattern: "b"}\n');
    expect(allText(both)).toContain("Only one of 'regex_pattern' or 'match_pattern' may be set, not both");
    const none = planFails('          - log_watch: {logger: logger}\n');
    expect(allText(none)).toContain("Either 'regex_pattern' or 'match_pattern' must be set");
  });

  it.each([
    ['0', '"${{ variables.ZERO }}"'],
    ['1.5', '"${{ variables.HALF }}"'],
  ])('refuses a match_count of %s from an expression', (_shown, expr) => {
    const e = planFails(`          - log_watch: {match_pattern: "a", match_count: ${expr}}\n`);
    expect(e.code).toBe('plan.probe_range');
    expect(e.message).toBe("log_watch.match_count of task 'srv' must be an integer > 0");
    expect(e.location).toBeDefined();
  });
});
