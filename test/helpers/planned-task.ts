/** A PlannedTask with plain defaults (one bash task on the local backend), for tests that build Plans by hand. */
import { join } from 'node:path';
import type { PlannedTask } from '../../src/plan/types.js';

export function plannedTask(
  name: string,
  over: Partial<PlannedTask> = {},
  outputRoot = '/nonexistent',
): PlannedTask {
  const outputDir = join(outputRoot, name);
  const t: PlannedTask = {
    name,
    base: name,
    replicaIndex: 0,
    replicaCount: 1,
    policy: 'parallel',
    sweep: {},
    backend: 'local',
    backendType: 'local',
    operator: { name: 'default_local', type: 'bash', config: {} },
    dependsOn: [],
    script: 'true',
    argv: ['bash', '-c', 'true'],
    env: {},
    nodes: [],
    gpus: null,
    resources: null,
    releaseAfter: { nodes: 'placement_only', gpus: null },
    retries: null,
    probes: { readiness: [], failure: [] },
    result: null,
    outputs: null,
    uploads: null,
    monitor: null,
    failFast: false,
    outputDir,
    logPath: join(outputDir, `${name}.log`),
    launch: [],
    ...over,
  };
  // one launch spec from the task's argv/env unless the test gave its own
  if (!over.launch) t.launch = [{ nodeIndex: 0, argv: t.argv, env: t.env, mounts: [], devices: [] }];
  return t;
}
