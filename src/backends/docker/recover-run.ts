/**
 * `sflow recover` for Docker (kind hooks): `liveDriver` names a driver of the run that still runs
 * (its pid is in every container name it made); `recoverRun` removes every container the run's
 * ledger names — and any other container of the same dead drivers — on every engine the ledger
 * mentions, running or ended.
 */
import { ledgerPath, readHandleLedger } from '../../events/handle-ledger.js';
import type { RunRecoveryOptions } from '../kind.js';
import { describe, DockerEngine, type Endpoint } from '../container-engine.js';
import { driverPid } from '../container-engine.js';
import { membersOf } from './members.js';
import { isProcessAlive } from '../../util/process-liveness.js';

/**
 * Every container the run's Docker handles name. A handle whose state the kind cannot read is left
 * out here: its own `recover` already reported it (an attempt not recovered, the recovery failed).
 */
function dockerMembers(runDir: string) {
  return readHandleLedger(ledgerPath(runDir))
    .all.filter((h) => h.type === 'docker')
    .flatMap((h) => {
      try {
        return membersOf(h);
      } catch {
        return [];
      }
    });
}

export function dockerLiveDriver(runDir: string): string | undefined {
  const pids = new Set(dockerMembers(runDir).map((m) => driverPid(m.name)));
  for (const pid of pids)
    if (pid !== undefined && pid !== process.pid && isProcessAlive(pid))
      return `sflow driver pid ${pid} (docker containers sflow-p${pid}-…)`;
  return undefined;
}

export async function dockerRecoverRun(runDir: string, o: RunRecoveryOptions): Promise<string[]> {
  const members = dockerMembers(runDir);
  if (members.length === 0) return [];
  const engine = new DockerEngine(o.env);
  const byEndpoint = new Map<Endpoint, Set<number>>();
  for (const m of members) {
    const pid = driverPid(m.name);
    if (pid === undefined) continue;
    byEndpoint.set(m.host, (byEndpoint.get(m.host) ?? new Set()).add(pid));
  }
  const lines: string[] = [];
  for (const [host, pids] of byEndpoint) {
    const names: string[] = [];
    for (const pid of pids) names.push(...(await engine.names(host, `sflow-p${pid}-`, o.signal)));
    if (names.length === 0) continue;
    const r = await engine.rm(host, names, o.signal);
    lines.push(
      r.ok
        ? `docker: removed ${names.length} container(s)${host ? ` on ${host}` : ''}: ${names.join(', ')}`
        : `docker: could not remove ${names.join(', ')}${host ? ` on ${host}` : ''}: ${describe(r)}`,
    );
  }
  return lines;
}
