/**
 * `include_nodes` / `exclude_nodes` of a Slurm backend. When sflow asks for the allocation they
 * are salloc's `--nodelist` / `--exclude` (allocate.ts: Slurm picks the nodes). When sflow runs
 * inside a job it did not ask for (SLURM_JOB_ID: `sflow batch`, an interactive salloc) the job's
 * nodes are already chosen, so the filters pick among them: only the included nodes, none of the
 * excluded ones; an included node the job lacks is an error, not a silent smaller run.
 * Hostlist expressions (`n[1-4]`) are expanded by `scontrol show hostnames`.
 */
import { SflowError } from '../../util/sflow-error.js';
import type { PlannedNode } from '../../plan/types.js';
import { callFailure, type SlurmExec } from './slurm-exec.js';

const names = (v: unknown): string[] => (Array.isArray(v) ? v.map(String).filter(Boolean) : []);

/** the two fields of a backend's settings these rules read */
export interface NodeFilterFields {
  include_nodes?: unknown;
  exclude_nodes?: unknown;
}

/** plan-time rule: a node may not be both included and excluded (returns the clashing names) */
export function filterClash(config: NodeFilterFields): string[] {
  const ex = new Set(names(config.exclude_nodes));
  return names(config.include_nodes).filter((n) => ex.has(n));
}

async function expand(exec: SlurmExec, list: string[], signal: AbortSignal): Promise<string[]> {
  if (!list.some((n) => /[[,]/.test(n))) return list;
  const arg = list.join(',');
  const r = await exec('scontrol', ['show', 'hostnames', arg], { signal, retries: 1 });
  if (!r.ok)
    throw new SflowError('run.slurm_node_filter', callFailure('scontrol', ['show', 'hostnames', arg], r), {
      phase: 'run',
    });
  return r.stdout
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * The nodes of an inherited job that the backend's filters keep, re-indexed in the job's order;
 * `undefined` when the backend sets no filter.
 */
export async function filterJobNodes(
  exec: SlurmExec,
  backend: string,
  jobId: string,
  nodes: PlannedNode[],
  config: NodeFilterFields,
  signal: AbortSignal,
): Promise<PlannedNode[] | undefined> {
  const inc = names(config.include_nodes);
  const exc = names(config.exclude_nodes);
  if (inc.length === 0 && exc.length === 0) return undefined;
  const include = new Set(await expand(exec, inc, signal));
  const exclude = new Set(await expand(exec, exc, signal));
  const have = new Set(nodes.map((n) => n.name));
  const lacking = [...include].filter((n) => !have.has(n));
  if (lacking.length)
    throw new SflowError(
      'run.slurm_node_filter',
      `backend '${backend}': include_nodes names ${lacking.join(', ')}, which Slurm job ${jobId} (the job this run is inside) does not have: it has ${[...have].join(', ')}`,
      {
        phase: 'run',
        hint: 'inside a job the filters choose among its nodes; ask sbatch/salloc for those nodes (--nodelist), or run sflow outside the job so it allocates them itself',
      },
    );
  const kept = nodes.filter((n) => (include.size === 0 || include.has(n.name)) && !exclude.has(n.name));
  if (kept.length === 0)
    throw new SflowError(
      'run.slurm_node_filter',
      `backend '${backend}': exclude_nodes leaves none of the nodes of Slurm job ${jobId} (${[...have].join(', ')})`,
      { phase: 'run', hint: 'exclude fewer nodes, or run in a job that has other nodes' },
    );
  return kept.map((n, index) => ({ ...n, index }));
}
