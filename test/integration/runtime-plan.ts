/**
 * Hand-built Plans for runtime integration tests and benchmarks: real `bash -c` tasks on the
 * local backend, without the config loader or plan builder.
 */
import { plannedBackend } from '../helpers/backends.js';
import { join } from 'node:path';
import type { Plan, PlannedProbe, PlannedTask } from '../../src/plan/types.js';
import { plannedTask } from '../helpers/planned-task.js';

export interface SimpleTask {
  name: string;
  script: string;
  dependsOn?: string[];
  retries?: PlannedTask['retries'];
  readiness?: Partial<PlannedProbe>[];
  failure?: Partial<PlannedProbe>[];
  result?: PlannedTask['result'];
  outputs?: PlannedTask['outputs'];
  env?: Record<string, string>;
}

export function probeOf(role: 'readiness' | 'failure', p: Partial<PlannedProbe>): PlannedProbe {
  const host = 'host' in p && typeof p.host === 'string' ? p.host : '127.0.0.1';
  return {
    role,
    kind: 'tcp_port',
    host,
    hosts: [host],
    delayS: 0,
    timeoutS: 1200,
    eachCheckTimeoutS: 2,
    intervalS: 0.05,
    successThreshold: 1,
    failureThreshold: 1,
    ...p,
  } as PlannedProbe; // a hand-made probe: the overrides may name any kind
}

export function buildPlan(runDir: string, tasks: SimpleTask[], workflow = 'wf'): Plan {
  const node = { name: 'localhost', ip: '127.0.0.1', index: 0, numGpus: null };
  const planned: PlannedTask[] = tasks.map((t) => {
    const outputDir = join(runDir, t.name);
    return plannedTask(
      t.name,
      {
        dependsOn: t.dependsOn ?? [],
        script: t.script,
        argv: ['bash', '-c', t.script],
        env: {
          SFLOW_WORKFLOW_OUTPUT_DIR: runDir,
          SFLOW_TASK_OUTPUT_DIR: outputDir,
          SFLOW_REPLICA_INDEX: '0',
          ...(t.env ?? {}),
        },
        nodes: [node],
        retries: t.retries ?? null,
        probes: {
          readiness: (t.readiness ?? []).map((p) => probeOf('readiness', p)),
          failure: (t.failure ?? []).map((p) => probeOf('failure', p)),
        },
        result: t.result ?? null,
        outputs: t.outputs ?? null,
      },
      runDir,
    );
  });
  return {
    workflow,
    runId: runDir.split('/').pop() as string,
    dryRun: false,
    paths: { workspaceDir: runDir, outputDir: join(runDir, '..'), runDir },
    variables: [],
    backends: [plannedBackend({ nodes: [node] })],
    artifacts: [],
    tasks: planned,
    order: planned.map((t) => t.name),
    warnings: [],
    storage: [],
    uploadAll: null,
    workflowMonitor: null,
  };
}
