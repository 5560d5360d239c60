/**
 * One registry entry: everything sflow knows about a backend type without running it — its
 * capabilities, the placeholder topology dry-run plans against, the settings schema of its recipe
 * entry — and, for a type that runs in this version, how to create an instance.
 */
import type * as z from 'zod';
import type { CollectorLauncher } from '../monitor/launcher.js';
import type { ExecOutcome } from '../util/bounded-exec.js';
import type { Recipe } from '../config/schema/index.js';
import type { Backend, BackendContext } from './backend.js';
import type { EngineState, HandleStateKind } from './handle-state.js';
import type { CliOptionBag } from '../util/cli-options.js';
export type { CliOptionBag, CliValue } from '../util/cli-options.js';
import type {
  BackendTraits,
  BackendType,
  Plan,
  PlannedBackend,
  PlannedNode,
  PlannedTask,
} from '../plan/types.js';

/**
 * `T`: the type this kind owns; its functions receive planned backends of that type only (the
 * registry, keyed by type, pairs each type with its own kind), so they read their settings typed.
 */
export interface BackendKind<T extends BackendType = BackendType> extends BackendTraits<T> {
  type: T;
  /** zod schema of the recipe's `backends[]` entry of this type */
  settings: z.ZodType;
  /**
   * The engine state its handles carry (`TaskHandle.engine`): its schema, labels and the legacy
   * parse of version-1 ids (`<kind>/handle-state.ts`); its instances read a handle's engine names
   * through `engineStateOf` with it, in `recover` first of all.
   */
  handleState: HandleStateKind<T, EngineState & { kind: T }>;
  /** creates an instance for a run; absent while the type plans but does not run yet */
  create?(this: void, planned: PlannedBackend<T>, ctx: BackendContext): Backend;
  /**
   * Imports what `create`, `liveDriver` and `recoverRun` need (a backend's client libraries stay
   * out of runs that do not use its type: the Kubernetes client alone is ~6 MB of code to
   * compile). Callers await it first, through the registry's `loadBackendKinds`.
   */
  load?: () => Promise<void>;
  /**
   * What a dry-run may learn without allocating anything (local: the machine's GPUs from
   * nvidia-smi); nodes to plan on instead of the placeholders, or undefined.
   */
  discover?(this: void, planned: PlannedBackend<T>, signal: AbortSignal): Promise<PlannedNode[] | undefined>;
  /**
   * Lines `--dry-run` prints under each of its tasks beyond the command (Kubernetes: the pod
   * manifests a launch sends); `options` are the command line's (e.g. --namespace).
   */
  dryRunDetail?(
    this: void,
    plan: Plan,
    backend: PlannedBackend<T>,
    options: CliOptionBag,
  ): Promise<(task: PlannedTask) => string[]>;
  /** starts hardware monitor collectors on its nodes; absent: its nodes are not sampled yet */
  monitorCollector?: () => CollectorLauncher;
  /**
   * `sflow recover` (run-level, after every open handle of the ledger went to its backend's
   * `recover`): `liveDriver` names a driver of the run that still runs (then nothing is touched);
   * `recoverRun` gives back what this type left in the run beyond task handles (Slurm: an owned
   * allocation; Kubernetes: reservation pods, ConfigMaps, Secrets by the run's label) and returns
   * one line per thing done.
   */
  liveDriver?: (runDir: string) => string | undefined;
  recoverRun?: (runDir: string, o: RunRecoveryOptions) => Promise<string[]>;
  /**
   * The command-line flags this type adds (`sflow run -e`, `--extra-docker-args`, `--kube*`): the
   * CLI declares them from the registry, and hands each kind the whole option bag it reads them from.
   */
  cliFlags?: readonly BackendCliFlag[];
  /**
   * Applies this type's `sflow run` flags (and the environment a batch script sets) to the validated
   * recipe before it is planned, also for a dry-run; returns one warning or note per line.
   */
  applyRunFlags?: (
    recipe: Pick<Recipe, 'backends'>,
    options: CliOptionBag,
    env: NodeJS.ProcessEnv,
  ) => string[];
  /** `sflow batch`: the type's batch scheduler (Slurm's sinfo, sacctmgr and sbatch); absent: none */
  batch?: BatchScheduler;
}

/** the commands a backend's flags may belong to */
export type BackendCliCommand = 'run' | 'recover';

export interface BackendCliFlag {
  /** as commander spells it: `-e, --extra-args <arg>` */
  flags: string;
  description: string;
  /** each use adds one value (an array option) */
  repeatable?: boolean;
  commands: readonly BackendCliCommand[];
}

/** one call of a batch scheduler's command-line tool, bounded (locally, or on a login node over SSH) */
export type SchedulerCall = (
  tool: string,
  args: string[],
  o?: { timeoutMs?: number },
) => Promise<ExecOutcome>;

export interface BatchScheduler {
  /** the scheduler's tools on this machine, with this environment */
  local(env?: NodeJS.ProcessEnv): SchedulerCall;
  /** the partition a job goes to when none is named (bounded, silent on failure) */
  defaultPartition(call?: SchedulerCall): Promise<string | undefined>;
  /** the user's account (bounded, silent on failure) */
  defaultAccount(call?: SchedulerCall, env?: NodeJS.ProcessEnv): Promise<string | undefined>;
  /** submits a written script: the job id, or an error in the scheduler's own words */
  submit(
    script: string,
    call?: SchedulerCall,
  ): Promise<{ jobId: string; output: string } | { error: string }>;
}

export interface RunRecoveryOptions {
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  /** the CLI options of `sflow recover` (e.g. --kubeconfig) */
  options: CliOptionBag;
}

/** a repeatable flag's values from the option bag (absent: none) */
export function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : [];
}
/** `<name>-node0`, `<name>-node1`, … at `0.0.0.<i+1>` (backends.md §1.4). */
export function placeholderNodes(
  name: string,
  count: number | null,
  gpusPerNode: number | null,
): PlannedNode[] {
  const n = Math.max(1, count ?? 1);
  return Array.from({ length: n }, (_, i) => ({
    name: `${name}-node${i}`,
    ip: `0.0.0.${i + 1}`,
    index: i,
    numGpus: gpusPerNode,
  }));
}

/**
 * A kind's heavy part: `load()` imports it once (concurrent calls share the import); `get()` is
 * the module afterwards, and an internal error before (a caller that skipped `load`).
 */
export function lazyPart<M>(
  type: string,
  importer: () => Promise<M>,
): { load: () => Promise<void>; get: () => M } {
  let mod: M | undefined;
  let pending: Promise<void> | undefined;
  return {
    load: () =>
      (pending ??= importer().then(
        (m) => {
          mod = m;
        },
        (e: unknown) => {
          pending = undefined;
          throw e;
        },
      )),
    get: () => {
      if (mod === undefined) throw new Error(`internal: backend kind '${type}' used before its load()`);
      return mod;
    },
  };
}
