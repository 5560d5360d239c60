/**
 * The backend registry: backend type → its kind (factory, placeholder topology, capabilities,
 * settings schema). The CLI (the composition root) reads it to plan, dry-run and create backend
 * instances; the planner sees it only as the catalog the CLI hands in. Adding a backend is one
 * line here plus its folder under src/backends/ (docs/adding-a-backend.md).
 */
import { SflowError } from '../util/sflow-error.js';
import type { Recipe } from '../config/schema/index.js';
import type {
  BackendCatalog,
  BackendType,
  Plan,
  PlannedBackend,
  PlannedNode,
  PlannedTask,
} from '../plan/types.js';
import type { CollectorLauncher } from '../monitor/launcher.js';
import type { Backend, BackendContext } from './backend.js';
import { dockerKind } from './docker/kind.js';
import type { BackendCliCommand, BackendCliFlag, BackendKind, BatchScheduler, CliOptionBag } from './kind.js';
import { kubernetesKind } from './kubernetes/kind.js';
import { localKind } from './local/kind.js';
import { slurmKind } from './slurm/kind.js';

/** each type's own kind (a kind typed for another type does not fit its key) */
export const BACKEND_KINDS: { readonly [T in BackendType]: BackendKind<T> } = {
  local: localKind,
  docker: dockerKind,
  slurm: slurmKind,
  kubernetes: kubernetesKind,
};

function isBackendType(type: string): type is BackendType {
  return Object.hasOwn(BACKEND_KINDS, type);
}

export function backendKind(type: string): BackendKind | undefined {
  return isBackendType(type) ? BACKEND_KINDS[type] : undefined;
}

/**
 * Imports the heavy part of each named kind (default: every kind) before `createBackend`, or a
 * kind's `liveDriver` / `recoverRun`, is called; unknown types are skipped.
 */
export async function loadBackendKinds(types: Iterable<string> = Object.keys(BACKEND_KINDS)): Promise<void> {
  await Promise.all([...new Set(types)].map(async (t) => backendKind(t)?.load?.()));
}

/** The planner's view of the registry. */
export const backendCatalog: BackendCatalog = (type) => backendKind(type);

/** Types that plan and dry-run but do not run in this version: refused before anything starts. */
export function unrunnableBackends(plan: Pick<Plan, 'backends'>): PlannedBackend[] {
  return plan.backends.filter((b) => !backendKind(b.type)?.create);
}

export function notRunnableError(b: PlannedBackend): SflowError {
  return new SflowError(
    'run.backend_unavailable',
    `backend '${b.name}' (${b.type}) cannot run in this version of sflow; use --dry-run to see its plan`,
    {
      phase: 'preflight',
      hint: `running backends: ${Object.values(BACKEND_KINDS)
        .filter((k) => k.create)
        .map((k) => k.type)
        .join(', ')}; the others are planned and dry-run only`,
    },
  );
}

/** Creates the instance of a planned backend (refuses a type that does not run yet). */
export function createBackend(planned: PlannedBackend, ctx: BackendContext): Backend {
  const kind = backendKind(planned.type);
  if (!kind?.create) throw notRunnableError(planned);
  return kind.create(planned, ctx);
}

/** The hardware monitor's collector launcher of every backend type that has one. */
export function collectorLaunchers(): Partial<Record<BackendType, CollectorLauncher>> {
  const out: Partial<Record<BackendType, CollectorLauncher>> = {};
  for (const k of Object.values(BACKEND_KINDS)) if (k.monitorCollector) out[k.type] = k.monitorCollector();
  return out;
}

/** Backends whose tasks request GPUs (a backend may read the machine's GPUs for them). */
export function backendsWithGpuTasks(plan: Pick<Plan, 'tasks'>): Set<string> {
  return new Set(plan.tasks.filter((t) => t.resources?.gpus !== undefined).map((t) => t.backend));
}

/**
 * What a dry-run learns without allocating: per backend with GPU tasks, the nodes its kind
 * discovers (local: this machine's GPUs), to plan on instead of the placeholders.
 */
export async function discoverTopology(
  plan: Pick<Plan, 'backends' | 'tasks'>,
  signal: AbortSignal,
): Promise<Record<string, PlannedNode[]>> {
  const gpu = backendsWithGpuTasks(plan);
  const out: Record<string, PlannedNode[]> = {};
  for (const b of plan.backends) {
    const discover = backendKind(b.type)?.discover;
    if (!discover || !gpu.has(b.name)) continue;
    const nodes = await discover(b, signal);
    if (nodes) out[b.name] = nodes;
  }
  return out;
}

/** What the backends add under each task of a dry-run (a task of a backend without any: nothing). */
export async function dryRunDetails(
  plan: Plan,
  options: CliOptionBag,
): Promise<(task: PlannedTask) => string[]> {
  const used = new Set(plan.tasks.map((t) => t.backend));
  const by = new Map<string, (task: PlannedTask) => string[]>();
  for (const b of plan.backends) {
    const detail = backendKind(b.type)?.dryRunDetail;
    if (detail && used.has(b.name)) by.set(b.name, await detail(plan, b, options));
  }
  return (t) => by.get(t.backend)?.(t) ?? [];
}

/** The flags every backend type adds to one command, in registry order (each flag once). */
export function backendCliFlags(command: BackendCliCommand): BackendCliFlag[] {
  const out: BackendCliFlag[] = [];
  for (const k of Object.values(BACKEND_KINDS))
    for (const f of k.cliFlags ?? [])
      if (f.commands.includes(command) && !out.some((o) => o.flags === f.flags)) out.push(f);
  return out;
}

/**
 * Each backend type applies its `sflow run` flags to the validated recipe (Slurm's -e, Docker's
 * --extra-docker-args, a batch job's SFLOW_SLURM_GPUS_PER_NODE); the warnings and notes, in order.
 */
export function applyBackendRunFlags(
  recipe: Pick<Recipe, 'backends'>,
  options: CliOptionBag,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  return Object.values(BACKEND_KINDS).flatMap((k) => k.applyRunFlags?.(recipe, options, env) ?? []);
}

/** `sflow batch`: the batch scheduler of the backend type that has one (capability `batch`). */
export function batchScheduler(): BatchScheduler {
  const kind = Object.values(BACKEND_KINDS).find((k) => k.capabilities.batch && k.batch);
  if (!kind?.batch)
    throw new SflowError('cli.not_yet', 'no backend of this version of sflow submits batch jobs', {
      phase: 'limitation',
      hint: 'use sflow run',
    });
  return kind.batch;
}
