/**
 * A collector on this host (local backend; Docker on the local engine): the hardware monitor
 * collector runs bare (no container), in its own process group, as a child of the driver. It exits by itself when the driver is gone
 * (`--parent-pid`, checked every tick); the driver also signals its group when it exits.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { stopGroup } from '../util/terminate/index.js';
import {
  collectorArgs,
  type CollectorLauncher,
  type CollectorLaunch,
  type RunningCollector,
} from './launcher.js';

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
      const pid = child.pid;
      let exited = false;
      const gone = new Promise<void>((resolve) => {
        child.once('exit', () => {
          exited = true;
          resolve();
        });
        child.once('error', () => {
          exited = true;
          resolve();
        });
      });
      const onExit = () => signal('SIGKILL');
      process.once('exit', onExit);
      function signal(sig: NodeJS.Signals) {
        if (exited || pid === undefined) return;
        try {
          process.kill(-pid, sig);
        } catch {
          /* already gone */
        }
      }
      let stopping: Promise<void> | undefined;
      return Promise.resolve({
        hostName: host,
        nodeId: String(l.spec.nodeId),
        startedAt,
        stop() {
          stopping ??= (async () => {
            if (pid !== undefined) await stopGroup(pid, { graceMs: GRACE_MS, leaderExit: gone });
            process.removeListener('exit', onExit);
          })();
          return stopping;
        },
      });
    },
  };
}
