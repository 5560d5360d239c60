/** Recipe text → loaded recipe (with the CLI monitor flags) → dry-run Plan → monitor schedule. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRecipe } from '../../../src/config/load.js';
import { applyMonitorFlags, type MonitorFlags } from '../../../src/config/monitor-flags.js';
import { buildPlan } from '../../../src/plan/build.js';
import { backendCatalog } from '../../../src/backends/registry.js';
import { monitorSchedule } from '../../../src/plan/monitor-schedule.js';

export function planOf(yaml: string, flags: MonitorFlags = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'sflow-mon-plan-'));
  try {
    const file = join(dir, 'r.yaml');
    writeFileSync(file, yaml);
    const loaded = loadRecipe({ files: [file], set: [], artifacts: [], missable: [] });
    applyMonitorFlags(loaded.recipe, flags);
    const plan = buildPlan(loaded, {
      workspaceDir: dir,
      dryRun: true,
      runId: 'r1',
      catalog: backendCatalog,
    });
    return { plan, loaded, schedule: monitorSchedule(plan) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const paths = (s: ReturnType<typeof monitorSchedule>) => s.views.map((v) => v.path);
