/** Plans of the original tool's Kubernetes recipes (../shared/compat), as `--dry-run` builds them. */
import { backendCatalog } from '../../../src/backends/registry.js';
import { loadRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { Plan } from '../../../src/plan/types.js';
import { sharedPath } from '../../helpers/shared.js';

export const RUN_ID = 'golden-20261201-000000-000000';

export function compatPlan(files: string[], set: string[] = []): Plan {
  const loaded = loadRecipe({
    files: files.map((f) => sharedPath('compat', f)),
    set,
    artifacts: [],
    missable: [],
  });
  return buildPlan(loaded, {
    dryRun: true,
    runId: RUN_ID,
    workspaceDir: '/work/golden',
    catalog: backendCatalog,
  });
}
