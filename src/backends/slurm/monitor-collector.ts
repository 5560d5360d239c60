/**
 * Slurm: the hardware monitor collector of a node runs as an `srun --overlap` step on that node,
 * bare (no container) and reserving nothing (monitor.md, backends.md §4.7). The POSIX sh script is
 * fed on the step's stdin (`sh -s`), so the compute node needs no copy of sflow; its CSV files go
 * to the run folder (shared with the driver). Stop: SIGTERM to the srun client (forwarded to the
 * collector, which ends cleanly), SIGKILL after a grace.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import {
  collectorArgs,
  type CollectorLaunch,
  type CollectorLauncher,
  type RunningCollector,
} from '../../monitor/launcher.js';
import { superviseCollector } from '../../monitor/supervise.js';

const GRACE_MS = 3000;

/** the srun argv of one node's collector */
export function collectorSrunArgv(l: CollectorLaunch): string[] {
  const node = l.spec.node;
  const argv = ['srun'];
  if (node.allocation) argv.push('--jobid', node.allocation);
  argv.push(
    '--nodes',
    '1',
    '--ntasks',
    '1',
    '--nodelist',
    node.name,
    '--job-name',
    'sflow-monitor',
    '--overlap',
    '--input',
    '0',
    'sh',
    '-s',
    '--',
    ...collectorArgs(l.spec, { rawDir: l.rawDir, host: node.name }),
  );
  return argv;
}

export function slurmCollectorLauncher(env: NodeJS.ProcessEnv = process.env): CollectorLauncher {
  return {
    start(l: CollectorLaunch): Promise<RunningCollector> {
      mkdirSync(l.rawDir, { recursive: true });
      const node = l.spec.node.name;
      const script = openSync(l.scriptPath, 'r');
      const err = openSync(join(l.rawDir, `collector_node_${l.spec.nodeId}_${node}.stderr`), 'a');
      const startedAt = Date.now();
      const child = spawn(collectorSrunArgv(l)[0], collectorSrunArgv(l).slice(1), {
        detached: true,
        stdio: [script, 'ignore', err],
        env: { ...env, SFLOW_TASK_OUTPUT_DIR: l.rawDir },
      });
      closeSync(script);
      closeSync(err);
      const stop = superviseCollector(child, { graceMs: GRACE_MS });
      return Promise.resolve({
        hostName: node,
        nodeId: String(l.spec.nodeId),
        startedAt,
        stop,
      });
    },
  };
}
