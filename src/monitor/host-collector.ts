/**
 * A collector on this host (local backend; Docker on the local engine): the hardware monitor
 * collector runs bare (no container), in its own process group, as a child of the driver. It exits by itself when the driver is gone
 * (`--parent-pid`, checked every tick); the driver also signals its group when it exits.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  collectorArgs,
  type CollectorLauncher,
  type CollectorLaunch,
  type RunningCollector,
} from './launcher.js';
import { superviseCollector } from './supervise.js';

const GRACE_MS = 3000;

export function hostCollectorLauncher(): CollectorLauncher {
  return {
    start(l: CollectorLaunch): Promise<RunningCollector> {
      mkdirSync(l.rawDir, { recursive: true });
      const host =
        hostname()
          .split('.')[0]
          .replace(/[^A-Za-z0-9.-]/g, '-') || 'localhost';
      const args = collectorArgs(l.spec, { rawDir: l.rawDir, host, parentPid: process.pid });
      const err = openSync(join(l.rawDir, `collector_node_${l.spec.nodeId}_${host}.stderr`), 'a');
      const startedAt = Date.now();
      const child = spawn('sh', [l.scriptPath, ...args], {
        detached: true,
        stdio: ['ignore', 'ignore', err],
        env: { ...process.env, SFLOW_TASK_OUTPUT_DIR: l.rawDir },
      });
      closeSync(err);
      const stop = superviseCollector(child, { graceMs: GRACE_MS });
      return Promise.resolve({
        hostName: host,
        nodeId: String(l.spec.nodeId),
        startedAt,
        stop,
      });
    },
  };
}
