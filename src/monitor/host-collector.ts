/**
 * A collector on this host (local backend; Docker on the local engine): the hardware monitor
 * collector runs bare (no container), in its own process group started by the launcher like a
 * task, so the launcher's lifeline stops it when the driver dies; it also exits by itself when the
 * driver is gone (`--parent-pid`, checked every tick).
 */
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  collectorArgs,
  type CollectorLauncher,
  type CollectorLaunch,
  type RunningCollector,
} from './launcher.js';
import { startCollectorGroup } from './supervise.js';

const GRACE_MS = 3000;

export function hostCollectorLauncher(): CollectorLauncher {
  return {
    async start(l: CollectorLaunch): Promise<RunningCollector> {
      mkdirSync(l.rawDir, { recursive: true });
      const host =
        hostname()
          .split('.')[0]
          .replace(/[^A-Za-z0-9.-]/g, '-') || 'localhost';
      const args = collectorArgs(l.spec, { rawDir: l.rawDir, host, parentPid: process.pid });
      const startedAt = Date.now();
      const stop = await startCollectorGroup({
        argv: ['sh', l.scriptPath, ...args],
        env: { ...process.env, SFLOW_TASK_OUTPUT_DIR: l.rawDir },
        logPath: join(l.rawDir, `collector_node_${l.spec.nodeId}_${host}.stderr`),
        graceMs: GRACE_MS,
      });
      return { hostName: host, nodeId: String(l.spec.nodeId), startedAt, stop };
    },
  };
}
