/**
 * `sflow recover <run dir>`: what a driver that died (SIGKILL, a lost machine) left running. Every
 * attempt its handle ledger still lists as open is given to its backend type's `recover` (stop it
 * if it still runs), then each backend type's `recoverRun` hook gives back what is left of the
 * run (Kubernetes: its reservation pods, ConfigMaps, Secrets). It calls only the kind hooks
 * (`liveDriver`, `recoverRun`) and `Backend.recover`: the canonical command replaces it.
 */
import { readHandleLedger, ledgerPath } from '../events/handle-ledger.js';
import type { PlannedBackend } from '../plan/types.js';
import { errorMessage } from '../util/errors.js';
import { BACKEND_KINDS, backendKind } from './registry.js';

export async function recoverRun(
  runDir: string,
  options: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
): Promise<{ lines: string[]; failed: number }> {
  const lines: string[] = [];
  let failed = 0;
  // a driver of the run still lives: it owns its objects, nothing is touched
  for (const kind of Object.values(BACKEND_KINDS)) {
    const live = kind.liveDriver?.(runDir);
    if (live) return { lines: [`${kind.type}: ${live}; nothing touched`], failed: 1 };
  }
  const { open, skipped } = readHandleLedger(ledgerPath(runDir));
  if (skipped) lines.push(`${skipped} unreadable line(s) in the handle ledger skipped`);
  for (const h of open) {
    const kind = backendKind(h.type);
    if (!kind?.create) {
      lines.push(`${h.task}#${h.attempt}: backend type '${h.type}' cannot be recovered by this version`);
      failed++;
      continue;
    }
    const planned: PlannedBackend = {
      name: h.backend,
      type: kind.type,
      isDefault: false,
      placeholder: false,
      nodes: [],
      config: {},
      capabilities: kind.capabilities,
    };
    try {
      const b = kind.create(planned, {
        runId: h.runId,
        runDir,
        log: (m) => lines.push(m),
        options,
        env,
        gpuTasks: false,
      });
      const r = await b.recover(h, { graceMs: 5_000 }, signal);
      lines.push(
        `${h.task}#${h.attempt} (${h.backend}): ${r.found ? `stopped — ${r.detail}` : `nothing running (${r.detail})`}`,
      );
    } catch (e) {
      failed++;
      lines.push(`${h.task}#${h.attempt} (${h.backend}): ${errorMessage(e)}`);
    }
  }
  for (const kind of Object.values(BACKEND_KINDS)) {
    if (!kind.recoverRun) continue;
    try {
      lines.push(...(await kind.recoverRun(runDir, { env, signal, options })));
    } catch (e) {
      failed++;
      lines.push(`${kind.type}: ${errorMessage(e)}`);
    }
  }
  if (!lines.length) lines.push('nothing to recover: every attempt of the run ended');
  return { lines, failed };
}
