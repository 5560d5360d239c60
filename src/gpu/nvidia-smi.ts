/**
 * Local GPU discovery through nvidia-smi's CSV query interface, via the bounded external-call helper
 * (no shell, 10 s limit). Output format (`--format=csv,noheader,nounits`): one row per GPU / process,
 * values separated by ", ", missing values as "[N/A]" (or "[Not Supported]", "[Insufficient
 * Permissions]"); no GPUs → "No devices were found" and a non-zero exit.
 */
import { boundedExec } from '../util/bounded-exec.js';
import { SflowError, type ErrorPhase } from '../util/sflow-error.js';

export interface GpuInfo {
  /** nvidia-smi index (PCI order unless CUDA_DEVICE_ORDER says otherwise) */
  index: number;
  uuid: string;
  name: string;
  memoryTotalMiB: number | null;
  memoryUsedMiB: number | null;
}

export interface GpuProcess {
  gpuUuid: string;
  pid: number;
  /** null when nvidia-smi cannot tell ("[N/A]", e.g. inside containers) */
  usedMemoryMiB: number | null;
}

export interface GpuListEntry {
  index: number;
  name: string;
  uuid: string;
}

export const GPU_QUERY_ARGS = [
  '--query-gpu=index,uuid,name,memory.total,memory.used',
  '--format=csv,noheader,nounits',
] as const;
export const APPS_QUERY_ARGS = [
  '--query-compute-apps=gpu_uuid,pid,used_memory',
  '--format=csv,noheader,nounits',
] as const;
export const NVIDIA_SMI_TIMEOUT_MS = 10_000;

export interface NvidiaSmiOptions {
  /** program to run (default `nvidia-smi`, found on PATH) */
  bin?: string;
  /** added to the driver's environment (tests point PATH at the fake) */
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** phase of the SflowError thrown when nvidia-smi exists but fails (default 'run') */
  phase?: ErrorPhase;
}

/** "81559", "81559 MiB", "[N/A]" → number | null */
function number(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const v = raw.trim();
  if (v === '' || v.startsWith('[') || /^n\/a$/i.test(v)) return null;
  const n = Number.parseFloat(v);
  return Number.isFinite(n) ? n : null;
}

function rows(text: string): string[][] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0)
    .map((l) => l.split(',').map((f) => f.trim()));
}

/** rows of `--query-gpu=index,uuid,name,memory.total,memory.used`; unparsable lines are skipped */
export function parseGpuCsv(text: string): GpuInfo[] {
  const out: GpuInfo[] = [];
  for (const f of rows(text)) {
    if (f.length < 5 || !/^\d+$/.test(f[0]) || !/^(GPU|MIG)-/.test(f[1])) continue;
    out.push({
      index: Number(f[0]),
      uuid: f[1],
      // a product name could contain a comma: it is everything between uuid and the two numbers
      name: f.slice(2, f.length - 2).join(', '),
      memoryTotalMiB: number(f[f.length - 2]),
      memoryUsedMiB: number(f[f.length - 1]),
    });
  }
  return out.sort((a, b) => a.index - b.index);
}

/** rows of `--query-compute-apps=gpu_uuid,pid,used_memory`; "No running processes found" → [] */
export function parseComputeAppsCsv(text: string): GpuProcess[] {
  const out: GpuProcess[] = [];
  for (const f of rows(text)) {
    if (f.length < 2 || !/^(GPU|MIG)-/.test(f[0]) || !/^\d+$/.test(f[1])) continue;
    out.push({ gpuUuid: f[0], pid: Number(f[1]), usedMemoryMiB: number(f[2]) });
  }
  return out;
}

/** `nvidia-smi -L`: "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-…)"; MIG child lines are skipped */
export function parseListGpus(text: string): GpuListEntry[] {
  const out: GpuListEntry[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^GPU (\d+): (.*) \(UUID: ([^)]+)\)\s*$/.exec(line.trim());
    if (m) out.push({ index: Number(m[1]), name: m[2], uuid: m[3] });
  }
  return out;
}

/** stdout of a successful call; null when nvidia-smi is not installed; '' when it sees no GPU */
async function run(args: readonly string[], o: NvidiaSmiOptions): Promise<string | null> {
  const bin = o.bin ?? 'nvidia-smi';
  const r = await boundedExec(bin, [...args], {
    timeoutMs: o.timeoutMs ?? NVIDIA_SMI_TIMEOUT_MS,
    env: o.env,
    signal: o.signal,
  });
  if (r.ok) return r.stdout;
  if (r.errorCode === 'ENOENT') return null;
  if (/No devices were found/i.test(r.stdout + r.stderr)) return '';
  const why = r.timedOut
    ? `did not answer within ${Math.round((o.timeoutMs ?? NVIDIA_SMI_TIMEOUT_MS) / 1000)} s`
    : `failed (exit ${r.exitCode ?? r.signal ?? r.errorCode ?? '?'}): ${(r.stderr || r.stdout).trim().slice(0, 300)}`;
  throw new SflowError('GPU_PROBE_FAILED', `${bin} ${args[0]} ${why}`, {
    phase: o.phase ?? 'run',
    hint: 'check the NVIDIA driver (nvidia-smi must work for the user running sflow)',
  });
}

/**
 * The local GPUs, or null when nvidia-smi is not installed (no GPUs: the backend then relies on a
 * declared gpus_per_node). Throws SflowError when nvidia-smi exists but fails or times out — that
 * must not be mistaken for "no GPUs".
 */
export async function queryGpus(o: NvidiaSmiOptions = {}): Promise<GpuInfo[] | null> {
  const out = await run(GPU_QUERY_ARGS, o);
  return out === null ? null : parseGpuCsv(out);
}

/** compute processes on the local GPUs ([] without nvidia-smi); throws like queryGpus */
export async function queryComputeApps(o: NvidiaSmiOptions = {}): Promise<GpuProcess[]> {
  const out = await run(APPS_QUERY_ARGS, o);
  return out === null ? [] : parseComputeAppsCsv(out);
}

/** `nvidia-smi -L`, or null without nvidia-smi */
export async function listGpus(o: NvidiaSmiOptions = {}): Promise<GpuListEntry[] | null> {
  const out = await run(['-L'], o);
  return out === null ? null : parseListGpus(out);
}
