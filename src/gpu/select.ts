/** Which GPUs a claim may take: free of live reservations and of foreign workloads. */
import { SflowError } from '../util/sflow-error.js';
import type { GpuInfo, GpuProcess } from './nvidia-smi.js';
import type { ReservationRecord, StoredRecord } from './records.js';
import type { RegistrySettings } from './settings.js';

export interface Inventory {
  gpus: GpuInfo[];
  apps: GpuProcess[];
}

export interface Self {
  runId: string;
  host: string;
  pid: number;
}

export type Picked =
  | { ok: true; gpus: GpuInfo[] }
  | { ok: false; free: GpuInfo[]; held: Map<string, ReservationRecord>; foreign: Map<string, string> };

/** records this process handed back (lent / handover) for its own run: claimable again by it */
function claimableByMe(r: ReservationRecord, self: Self): boolean {
  return r.runId === self.runId && r.pid === self.pid && r.host === self.host && r.state !== 'held';
}

export function pickGpus(
  want: { count?: number; indices?: number[] },
  prefer: number[],
  inv: Inventory,
  live: StoredRecord[],
  self: Self,
  s: RegistrySettings,
  task: string,
): Picked {
  const held = new Map<string, ReservationRecord>();
  const owned = new Set<string>();
  const handedBack = new Set<string>();
  for (const { record } of live) {
    for (const u of record.uuids) {
      owned.add(u);
      if (claimableByMe(record, self)) handedBack.add(u);
      else if (!held.has(u)) held.set(u, record);
    }
  }
  // sflow's own workloads sit on owned GPUs; only the others can be foreign
  const foreign = new Map<string, string>();
  if (!s.ignoreForeign) {
    for (const g of inv.gpus) {
      if (owned.has(g.uuid)) continue;
      const busy = inv.apps.filter((a) => a.gpuUuid === g.uuid && (a.usedMemoryMiB ?? 0) > s.busyMemMiB);
      if (busy.length > 0) {
        foreign.set(g.uuid, busy.map((a) => `pid ${a.pid} using ${a.usedMemoryMiB} MiB`).join(', '));
      } else if ((g.memoryUsedMiB ?? 0) > s.busyMemMiB) {
        foreign.set(g.uuid, `${g.memoryUsedMiB} MiB in use`);
      }
    }
  }
  const free = inv.gpus.filter((g) => !held.has(g.uuid) && !foreign.has(g.uuid));
  if (want.indices !== undefined) {
    if (want.indices.length === 0) throw badRequest(task, 'an empty GPU index list');
    const byIndex = new Map(inv.gpus.map((g) => [g.index, g]));
    const missing = want.indices.filter((i) => !byIndex.has(i));
    if (missing.length > 0) {
      throw badRequest(
        task,
        `GPU index(es) ${missing.join(',')}, which this host does not have (${inv.gpus.length} GPU(s))`,
      );
    }
    const wanted = want.indices.flatMap((i) => byIndex.get(i) ?? []);
    return wanted.every((g) => free.includes(g))
      ? { ok: true, gpus: wanted }
      : { ok: false, free, held, foreign };
  }
  const count = want.count ?? 0;
  if (!Number.isInteger(count) || count <= 0) throw badRequest(task, `a GPU count of ${want.count}`);
  if (count > inv.gpus.length) {
    throw badRequest(task, `${count} GPU(s), but this host has ${inv.gpus.length}`);
  }
  if (free.length < count) return { ok: false, free, held, foreign };
  const rank = (g: GpuInfo): number => {
    const p = prefer.indexOf(g.index);
    return (handedBack.has(g.uuid) ? 0 : 2) + (p >= 0 ? 0 : 1);
  };
  const chosen = [...free].sort((a, b) => rank(a) - rank(b) || a.index - b.index).slice(0, count);
  return { ok: true, gpus: chosen.sort((a, b) => a.index - b.index) };
}

function badRequest(task: string, what: string): SflowError {
  return new SflowError('GPU_CLAIM_INVALID', `Task '${task}' asks the GPU registry for ${what}`, {
    phase: 'run',
  });
}

/** "Task 'x' of run 'r' needs 2 GPU(s), but only 1 of 4 … are free:" + one line per unavailable GPU */
export function describeShortage(
  req: { runId: string; task: string; want: { count?: number; indices?: number[] } },
  inv: Inventory,
  live: StoredRecord[],
  picked: Extract<Picked, { ok: false }>,
  s: RegistrySettings,
): string {
  const what = req.want.indices ? `GPU(s) ${req.want.indices.join(',')}` : `${req.want.count} GPU(s)`;
  const lines = [
    `Task '${req.task}' of run '${req.runId}' needs ${what}, but only ${picked.free.length} of ${inv.gpus.length} ` +
      `GPU(s) on this host are free (registry ${s.dir}, ${live.length} live reservation(s)):`,
  ];
  for (const g of inv.gpus) {
    const r = picked.held.get(g.uuid);
    if (r) {
      const lent = r.state === 'lent' ? ', still running after READY' : '';
      lines.push(
        `  GPU ${g.index} (${g.uuid}): reserved by run '${r.runId}' task '${r.task}' (pid ${r.pid}${lent})`,
      );
      continue;
    }
    const f = picked.foreign.get(g.uuid);
    if (f) lines.push(`  GPU ${g.index} (${g.uuid}): busy with a foreign workload (${f})`);
  }
  return lines.join('\n');
}
