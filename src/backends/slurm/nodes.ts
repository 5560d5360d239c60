/**
 * Node discovery of an allocation (backends.md §4.4): `scontrol getaddrs <list>`; where that
 * command does not exist (Slurm before 23.02) or says nothing usable, `scontrol show hostnames`
 * + the nodes' NodeAddr from `scontrol -o show node`; as a last resort one `srun --overlap` step
 * per node printing `<Slurm node name>:<hostname -i>`. Plus the driver-side GPU topology probe (0.3.1):
 * index → UUID per node, from one `srun --overlap` step running nvidia-smi on every node.
 */
import { SflowError } from '../../util/sflow-error.js';
import type { PlannedNode } from '../../plan/types.js';
import { callFailure, type SlurmExec } from './slurm-exec.js';
import { parseGetAddrs, parseNodeAddrs } from './steps.js';

interface Found {
  nodes: Array<[string, string]>;
  /** why an earlier way did not work, for the warning when the last resort is used */
  notes: string[];
}

async function viaGetAddrs(exec: SlurmExec, list: string, signal: AbortSignal): Promise<Found> {
  const r = await exec('scontrol', ['getaddrs', list], {
    signal,
    retries: 1,
    retryOn: (o) => !o.ok && !/invalid keyword|invalid command/i.test(o.stderr + o.stdout),
  });
  if (r.ok) {
    const nodes = parseGetAddrs(r.stdout);
    if (nodes.length) return { nodes, notes: [] };
    return { nodes: [], notes: ['scontrol getaddrs printed no address'] };
  }
  // an older Slurm without getaddrs is not a problem worth a warning
  if (/invalid keyword|invalid command/i.test(r.stderr + r.stdout)) return { nodes: [], notes: [] };
  return { nodes: [], notes: [callFailure('scontrol', ['getaddrs', list], r)] };
}

async function viaShowNode(exec: SlurmExec, list: string, signal: AbortSignal): Promise<Found> {
  const names = await exec('scontrol', ['show', 'hostnames', list], { signal, retries: 1 });
  if (!names.ok) return { nodes: [], notes: [callFailure('scontrol', ['show', 'hostnames', list], names)] };
  const hosts = names.stdout
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!hosts.length) return { nodes: [], notes: [`scontrol show hostnames ${list} printed nothing`] };
  const info = await exec('scontrol', ['-o', 'show', 'node', list], { signal, retries: 1 });
  const addrs = info.ok ? parseNodeAddrs(info.stdout) : new Map<string, string>();
  const notes = info.ok ? [] : [callFailure('scontrol', ['-o', 'show', 'node', list], info)];
  if (hosts.some((h) => !addrs.has(h)))
    notes.push(`no NodeAddr for ${hosts.filter((h) => !addrs.has(h)).join(', ')}`);
  return { nodes: notes.length ? [] : hosts.map((h) => [h, addrs.get(h)!]), notes };
}

async function viaSrun(exec: SlurmExec, jobId: string, list: string, signal: AbortSignal): Promise<Found> {
  const args = [
    '--nodelist',
    list,
    '--ntasks-per-node=1',
    '--jobid',
    jobId,
    '--overlap',
    'bash',
    '-c',
    // the Slurm node name (what --nodelist takes), which need not be the host name (NodeHostname)
    'echo ${SLURMD_NODENAME:-$(hostname)}:$(hostname -i)',
  ];
  const r = await exec('srun', args, { signal, timeoutMs: 120_000 });
  if (!r.ok) return { nodes: [], notes: [callFailure('srun', args, r)] };
  const seen = new Map<string, string>();
  for (const line of r.stdout.split('\n')) {
    if (!line.trim() || line.startsWith('srun')) continue;
    const parts = line.trim().split(':');
    if (parts.length < 2) continue;
    const host = parts[parts.length - 2].split('.')[0];
    const ip = parts[parts.length - 1].trim().split(/\s+/)[0];
    if (host && !seen.has(host)) seen.set(host, ip);
  }
  return { nodes: [...seen], notes: seen.size ? [] : [`srun printed no host: ${r.stdout.trim()}`] };
}

/** The allocation's nodes in Slurm's order, each with the address peers reach it at. */
export async function discoverNodes(
  exec: SlurmExec,
  jobId: string,
  list: string,
  gpusPerNode: number | null,
  signal: AbortSignal,
  warn: (m: string) => void,
  getaddrs = true,
): Promise<PlannedNode[]> {
  const notes: string[] = [];
  let found: Array<[string, string]> = [];
  const ways = [() => viaShowNode(exec, list, signal)];
  if (getaddrs) ways.unshift(() => viaGetAddrs(exec, list, signal));
  for (const way of ways) {
    const f = await way();
    notes.push(...f.notes);
    if (f.nodes.length) {
      found = f.nodes;
      break;
    }
  }
  if (!found.length) {
    warn(`Slurm node discovery falls back to srun (${notes.join('; ') || 'no address found'})`);
    const f = await viaSrun(exec, jobId, list, signal);
    notes.push(...f.notes);
    found = f.nodes;
  }
  if (!found.length)
    throw new SflowError(
      'run.slurm_nodes',
      `cannot find the nodes of Slurm job ${jobId} (${list}): ${notes.join('; ')}`,
      {
        phase: 'run',
      },
    );
  return found.map(([name, ip], index) => ({ name, ip, index, numGpus: gpusPerNode, allocation: jobId }));
}

export interface GpuTopology {
  /** node name → GPU UUIDs in index order */
  uuids: Map<string, string[]>;
  /** nodes without UUIDs, and why */
  missing: string[];
}

const PROBE_SCRIPT =
  'nvidia-smi --query-gpu=index,uuid --format=csv,noheader 2>&1 | sed "s/^/${SLURMD_NODENAME:-$(hostname)}|/"';

/** index → UUID of every node's GPUs, from one `srun --overlap` step over all of them. */
export async function probeGpuTopology(
  exec: SlurmExec,
  jobId: string,
  nodes: PlannedNode[],
  signal: AbortSignal,
): Promise<GpuTopology> {
  const args = [
    '--jobid',
    jobId,
    '--nodes',
    String(nodes.length),
    '--nodelist',
    nodes.map((n) => n.name).join(','),
    '--ntasks-per-node',
    '1',
    '--job-name',
    'sflow-gpu-topology',
    '--overlap',
    'sh',
    '-c',
    PROBE_SCRIPT,
  ];
  const r = await exec('srun', args, { signal, timeoutMs: 60_000 });
  const rows = new Map<string, Array<[number, string]>>();
  const other = new Map<string, string>();
  for (const line of (r.stdout + '\n' + r.stderr).split('\n')) {
    const bar = line.indexOf('|');
    if (bar < 0) continue;
    const node = line.slice(0, bar);
    const m = /^\s*(\d+)\s*,\s*(\S+)\s*$/.exec(line.slice(bar + 1));
    if (m) rows.set(node, [...(rows.get(node) ?? []), [Number(m[1]), m[2]]]);
    else if (line.slice(bar + 1).trim()) other.set(node, line.slice(bar + 1).trim());
  }
  const uuids = new Map<string, string[]>();
  const missing: string[] = [];
  for (const n of nodes) {
    const got = rows.get(n.name);
    if (got?.length)
      uuids.set(
        n.name,
        got.sort((a, b) => a[0] - b[0]).map(([, u]) => u),
      );
    else
      missing.push(
        `${n.name}: ${other.get(n.name) ?? (r.ok ? 'nvidia-smi printed nothing' : callFailure('srun', args, r))}`,
      );
  }
  return { uuids, missing };
}
