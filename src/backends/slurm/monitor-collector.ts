/**
 * Slurm: the hardware monitor collector of a node runs as an `srun --overlap` step on that node,
 * bare (no container) and reserving nothing (monitor.md, backends.md §4.7). The POSIX sh script is
 * fed on the step's stdin (`sh -s`), so the compute node needs no copy of sflow; its CSV files go
 * to the run folder (shared with the driver). The srun client is started through the launcher like
 * a task's (a `sh` that redirects the script to its stdin and execs srun), so the lifeline stops it
 * when the driver dies, and srun ends its step. Stop: SIGTERM to the srun client (forwarded to the
 * collector, which ends cleanly), SIGKILL after a grace.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  collectorArgs,
  type CollectorLaunch,
  type CollectorLauncher,
  type RunningCollector,
} from '../../monitor/launcher.js';
import { startCollectorGroup } from '../../monitor/supervise.js';

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
    async start(l: CollectorLaunch): Promise<RunningCollector> {
      mkdirSync(l.rawDir, { recursive: true });
      const node = l.spec.node.name;
      const startedAt = Date.now();
      const stop = await startCollectorGroup({
        // the script on srun's stdin (`sh -s` in the step reads it), as the driver would hand it
        argv: ['sh', '-c', 'exec "$@" <"$0"', l.scriptPath, ...collectorSrunArgv(l)],
        env: { ...env, SFLOW_TASK_OUTPUT_DIR: l.rawDir },
        logPath: join(l.rawDir, `collector_node_${l.spec.nodeId}_${node}.stderr`),
        graceMs: GRACE_MS,
      });
      return { hostName: node, nodeId: String(l.spec.nodeId), startedAt, stop };
    },
  };
}
