/**
 * `sflow recover <run-dir>…`: stops what a driver that died without cleaning up (SIGKILL, a lost
 * machine) left running. From the run folder's handle ledger (`handles.jsonl`) every attempt not
 * marked ended goes to its backend's `recover` (local: its process group; Slurm: its job step and
 * srun client), then each backend type gives back what it recorded beside the ledger (Slurm: the
 * allocation sflow created, never an inherited job). A run whose driver still runs is refused.
 * Recovered attempts are marked ended in the ledger, so a second `recover` finds nothing.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BackendContext, TaskHandle } from '../backends/backend.js';
import { BACKEND_KINDS, backendKind } from '../backends/registry.js';
import { SflowError } from '../config/errors.js';
import { HandleLedger, ledgerPath, readHandleLedger } from '../events/handle-ledger.js';
import type { BackendType, PlannedBackend } from '../plan/types.js';
import { errorMessage } from '../util/errors.js';
import { reportError } from './errors.js';

const say = (s: string) => process.stdout.write(`${s}\n`);

/** a bare instance of the handle's backend type, enough to find and stop what the handle names */
function recoverer(h: TaskHandle, runDir: string) {
  const kind = backendKind(h.type);
  if (!kind?.create) return undefined;
  const planned: PlannedBackend = {
    name: h.backend,
    type: h.type as BackendType,
    isDefault: true,
    placeholder: false,
    nodes: [],
    config: {},
    capabilities: kind.capabilities,
  };
  const ctx: BackendContext = {
    runId: h.runId,
    runDir,
    log: (m) => say(`  ⚠ ${m}`),
    options: {},
    env: process.env,
    gpuTasks: false,
  };
  return kind.create(planned, ctx);
}

async function recoverRun(
  runDir: string,
  graceMs: number,
  force: boolean,
  options: Record<string, unknown>,
): Promise<boolean> {
  if (!existsSync(runDir))
    throw new SflowError('recover.no_run_dir', `${runDir}: no such run folder`, {
      phase: 'usage',
      exitCode: 1,
      hint: 'pass a run folder: sflow_output/<run id>',
    });
  const live = Object.values(BACKEND_KINDS)
    .map((k) => k.liveDriver?.(runDir))
    .find(Boolean);
  if (live && !force) {
    process.stderr.write(
      `✗ ${runDir}: ${live}; stop it with Ctrl-C or kill -TERM (it cleans up itself), or pass --force\n`,
    );
    return false;
  }
  say(`Recovering ${runDir}`);
  const ledger = readHandleLedger(ledgerPath(runDir));
  const book = new HandleLedger(ledgerPath(runDir));
  let ok = true;
  for (const h of ledger.open) {
    const b = recoverer(h, runDir);
    const what = `${h.task} attempt ${h.attempt} (${h.backend}, ${h.type})`;
    if (!b) {
      say(`  ? ${what}: backend type '${h.type}' cannot run in this version; nothing done`);
      continue;
    }
    try {
      const r = await b.recover(h, { graceMs }, AbortSignal.timeout(graceMs + 60_000));
      if (r.found && r.stop && !r.stop.gone) {
        ok = false;
        say(`  ✗ ${what}: ${r.detail}${r.stop.error ? `: ${r.stop.error}` : ''} — still running`);
        continue;
      }
      say(`  ${r.found ? '✓ stopped' : '· already gone'}: ${what}: ${r.detail}`);
      book.write('ended', { ...h, state: 'EXITED' });
    } catch (e) {
      ok = false;
      say(`  ✗ ${what}: ${errorMessage(e)}`);
    }
  }
  book.close();
  if (!ledger.open.length) say('  · no attempt was left open in handles.jsonl');
  for (const k of Object.values(BACKEND_KINDS)) {
    if (!k.recoverRun) continue;
    try {
      for (const line of await k.recoverRun(runDir, {
        env: process.env,
        signal: AbortSignal.timeout(120_000),
        options,
      }))
        say(`  ${line}`);
    } catch (e) {
      ok = false;
      say(`  ✗ ${k.capabilities.label}: ${errorMessage(e)}`);
    }
  }
  return ok;
}

export async function recoverCommand(dirs: string[], opts: Record<string, unknown>): Promise<number> {
  try {
    const grace = opts.grace === undefined ? 5 : Number(opts.grace);
    if (!Number.isFinite(grace) || grace < 0)
      throw new SflowError('recover.grace', `--grace ${String(opts.grace)}: expected seconds (≥ 0)`, {
        phase: 'usage',
        exitCode: 2,
      });
    let ok = true;
    for (const d of dirs) ok = (await recoverRun(resolve(d), grace * 1000, Boolean(opts.force), opts)) && ok;
    return ok ? 0 : 1;
  } catch (e) {
    return reportError(e);
  }
}
