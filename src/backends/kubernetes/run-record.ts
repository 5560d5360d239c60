/**
 * `<run dir>/kubernetes-<backend>.json`: where a run's objects live (namespace, kubeconfig,
 * context, run id), written before anything is created, so `sflow recover <run dir>` can delete
 * them after the driver died, also when it died before launching any task; and whether that
 * driver still runs (`liveDriver`: then `sflow recover` touches nothing).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

export interface RunRecord {
  backend: string;
  namespace: string;
  kubeconfig: string;
  context: string;
  runId: string;
  /** `<host>:<pid>:<start time>` of the driver that wrote it (absent in older records) */
  driver?: string;
}

const PREFIX = 'kubernetes-';

export function writeRunRecord(runDir: string, backend: string, r: Omit<RunRecord, 'backend'>): void {
  if (!runDir || !existsSync(runDir)) return;
  try {
    writeFileSync(
      join(runDir, `${PREFIX}${backend.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`),
      JSON.stringify({ backend, ...r }, null, 2) + '\n',
    );
  } catch {
    // the record only helps recovery; the run goes on without it
  }
}

export function readRunRecords(runDir: string): RunRecord[] {
  if (!existsSync(runDir)) return [];
  return readdirSync(runDir)
    .filter((f) => f.startsWith(PREFIX) && f.endsWith('.json'))
    .flatMap((f) => {
      try {
        return [JSON.parse(readFileSync(join(runDir, f), 'utf8')) as RunRecord];
      } catch {
        return [];
      }
    });
}

/** the driver of the run still runs on this host: a line saying so, else undefined */
export function liveDriverOf(runDir: string, gone: (driver: string) => boolean): string | undefined {
  for (const r of readRunRecords(runDir)) {
    if (!r.driver || gone(r.driver)) continue;
    const [host, pid] = r.driver.split(':');
    if (host !== hostname()) continue;
    return `the driver of run ${r.runId} (pid ${pid}) still runs on this host`;
  }
  return undefined;
}
