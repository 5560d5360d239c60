/**
 * One `sflow batch` job checked before any script is written (artifacts-batch.md C4, C5): the
 * recipe loaded with the job's overrides, the CLI node / GPU counts written into every backend
 * that can run under sbatch (Slurm), then the same trial plan, artifact checks and refusals a
 * real `sflow run` makes before allocating. Gives the node count the job asks for.
 */
import { backendCatalog, backendKind, notRunnableError, unrunnableBackends } from '../backends/registry.js';
import { applyMonitorFlags } from '../config/monitor-flags.js';
import { loadRecipe, type LoadedRecipe } from '../config/load.js';
import { buildPlan } from '../plan/build.js';
import { makeRunId } from '../plan/run-id.js';
import { checkArtifactPaths } from '../preflight/artifacts.js';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { formatLocation, formatSflowError, isSflowError, SflowError } from '../util/sflow-error.js';
import { locate } from '../config/source.js';
import type { PlannedBackend } from '../plan/types.js';
import type { AllocationResolver, RecipeBackend } from './batch-allocation.js';
import { composedPathFor, type BatchScriptInput, type JobAllocationKey } from './batch-script.js';
import { composeText } from './compose.js';
import { resolveComposed } from '../config/compose-resolve.js';
import { reportError } from './errors.js';
import { runPreflight } from './run-preflight.js';
import { errorMessage } from '../util/errors.js';
import {
  missingSecrets,
  redactSecretVariables,
  secretVariableNames,
  type SecretSources,
} from '../config/secret-variables.js';
import { secretsMissing } from './secrets.js';

export interface BatchCommon {
  workspaceDir: string;
  outputDir: string;
  skipArtifactCheck: boolean;
  workflowMonitor: boolean;
  taskMonitors: string[];
  /** secret values from the environment, files or a prompt (cli/secrets.ts) */
  secrets?: SecretSources;
}

export interface JobSpec {
  files: string[];
  sets: string[];
  artifacts: string[];
  missable: string[];
  /** CLI / CSV node count, written into the batch backends */
  nodes?: number;
  /** where `nodes` came from, for warnings (default `--nodes`) */
  nodesFrom?: string;
  gpusPerNode?: number;
  /** bulk modes: --missable-tasks with one file is fine; the recipe's gpus_per_node beats the CLI's */
  bulk: boolean;
}

export interface ValidJob {
  loaded: LoadedRecipe;
  /** the recipe's Slurm backend the job allocates for (the default one, else the first) */
  backend: RecipeBackend;
  /** the node count for `#SBATCH --nodes` (CLI, else the first batch backend's `nodes`) */
  nodes?: number;
  /** the GPUs per node the job plans with, when the CLI set them */
  gpusPerNode?: number;
  warnings: string[];
}

type Obj = Record<string, unknown>;

function applyCounts(recipe: Obj, j: JobSpec, warnings: string[]): void {
  const backends = ((recipe.backends as Obj[] | undefined) ?? []).filter(
    (b) => backendKind(String(b?.type))?.capabilities.batch,
  );
  for (const b of backends) {
    const name = String(b.name);
    if (j.nodes !== undefined) {
      if (b.nodes !== undefined && String(b.nodes) !== String(j.nodes))
        warnings.push(
          `backend '${name}': nodes ${String(b.nodes)} → ${j.nodes} (${j.nodesFrom ?? '--nodes'})`,
        );
      b.nodes = j.nodes;
    }
    if (j.gpusPerNode !== undefined) {
      const declared = b.gpus_per_node;
      if (declared !== undefined && String(declared) !== String(j.gpusPerNode)) {
        if (j.bulk) {
          warnings.push(
            `backend '${name}': keeps gpus_per_node ${String(declared)} (the recipe wins over --gpus-per-node in bulk modes)`,
          );
          continue;
        }
        warnings.push(
          `backend '${name}': gpus_per_node ${String(declared)} → ${j.gpusPerNode} (--gpus-per-node)`,
        );
      }
      b.gpus_per_node = j.gpusPerNode;
    }
  }
}

/** A planned backend's resolved settings, located in the recipe it came from. */
function recipeBackend(loaded: LoadedRecipe, b: PlannedBackend): RecipeBackend {
  const list = (loaded.doc as { backends?: unknown }).backends;
  const i = Array.isArray(list) ? list.findIndex((x) => (x as { name?: unknown })?.name === b.name) : -1;
  return {
    name: b.name,
    config: b.config,
    at: (field, index) => {
      if (i < 0) return undefined;
      const loc = locate(loaded.doc, ['backends', i, field, ...(index !== undefined ? [index] : [])]);
      return loc ? formatLocation(loc) : undefined;
    },
  };
}

/** `the recipe: backend 'gpu' nodes (wf.yaml:9:12)`: where a setting of the job's backend is */
export function recipeField(job: ValidJob, field: string): string {
  const at = job.backend.at(field);
  return `the recipe: backend '${job.backend.name}' ${field}${at ? ` (${at})` : ''}`;
}

/** Throws the located error a real run would (config, plan, refused features, missing paths). */
export function validateJob(j: JobSpec, c: BatchCommon): ValidJob {
  const warnings: string[] = [];
  const loaded = loadRecipe({
    files: j.files,
    set: j.sets,
    artifacts: j.artifacts,
    missable: j.missable,
    allowMissableWithOneFile: j.bulk,
    secrets: c.secrets,
  });
  // nobody can be asked inside a job: a secret without a value is an error now
  const missing = missingSecrets(loaded.doc);
  if (missing.length) throw secretsMissing(`${j.files.join(', ')}`, missing);
  warnings.push(...loaded.warnings.map((w) => w.message));
  applyMonitorFlags(loaded.recipe, { workflow: c.workflowMonitor, tasks: c.taskMonitors });
  applyCounts(loaded.recipe, j, warnings);
  const workflow = String((loaded.recipe as { workflow: { name: string } }).workflow.name);
  const plan = buildPlan(loaded, {
    workspaceDir: c.workspaceDir,
    outputDir: c.outputDir,
    dryRun: false,
    runId: makeRunId(workflow),
    catalog: backendCatalog,
  });
  warnings.push(...runPreflight(plan, loaded, {}));
  warnings.push(...checkArtifactPaths(loaded, c.workspaceDir, c.skipArtifactCheck));
  const refused = unrunnableBackends(plan);
  if (refused.length) throw notRunnableError(refused[0]);
  const batchBackends = plan.backends.filter((b) => b.capabilities.batch);
  const batchBackend = batchBackends.find((b) => b.isDefault) ?? batchBackends[0];
  if (!batchBackend)
    throw new SflowError(
      'batch.no_slurm_backend',
      `${j.files.join(', ')}: no backend that runs under sbatch (types: ${plan.backends.map((b) => b.type).join(', ') || 'none'})`,
      {
        phase: 'plan',
        exitCode: 1,
        hint: 'sflow batch runs Slurm recipes: add a backend fragment with type: slurm (e.g. -f backends/slurm.yaml)',
      },
    );
  const nodes =
    j.nodes ?? (typeof batchBackend?.config.nodes === 'number' ? batchBackend.config.nodes : undefined);
  const gpn = batchBackend?.config.gpus_per_node;
  return {
    loaded,
    backend: recipeBackend(loaded, batchBackend),
    ...(nodes !== undefined ? { nodes } : {}),
    ...(j.gpusPerNode !== undefined && typeof gpn === 'number' ? { gpusPerNode: gpn } : {}),
    warnings,
  };
}

export interface BatchSetup {
  common: BatchCommon;
  /** each job's partition, account, time, name and extra lines (flags, else its recipe, else Slurm) */
  alloc: AllocationResolver;
  /** the script's fixed parts (everything but the job's files, overrides, allocation and node count) */
  base: Omit<BatchScriptInput, 'files' | 'sets' | 'artifacts' | 'missable' | 'nodes' | JobAllocationKey>;
  cliSets: string[];
  cliArtifacts: string[];
  cliMissable: string[];
  nodes?: number;
  gpusPerNode?: number;
}

/** a job that validated, with the script input made for it */
export interface PreparedJob {
  job: ValidJob;
  input: BatchScriptInput;
}

/** validateJob for files taken as they are, with the command line's overrides and counts */
export function validateSetupJob(s: BatchSetup, files: string[], bulk: boolean): ValidJob {
  return validateJob(
    {
      files,
      sets: s.cliSets,
      artifacts: s.cliArtifacts,
      missable: s.cliMissable,
      ...(s.nodes !== undefined ? { nodes: s.nodes } : {}),
      ...(s.gpusPerNode !== undefined ? { gpusPerNode: s.gpusPerNode } : {}),
      bulk,
    },
    s.common,
  );
}

/**
 * A single job that does not validate: the error in the usual shape (its kind, its exit code: a
 * usage error exits 2), then, for a recipe that does not dry-run, that no script was made.
 */
export function invalidJob(e: unknown): number {
  const code = reportError(e);
  if (isSflowError(e) && e.phase !== 'usage')
    process.stderr.write('✗ Aborting sbatch generation: the workflow does not pass its dry-run validation\n');
  return code;
}

/** The failure of a job's validation, in full (0.3.1: multi-line detail kept). */
export function validationFailure(e: unknown): string {
  if (isSflowError(e)) return formatSflowError(e);
  throw e;
}

/** The script's folders must exist before sbatch (Slurm does not create the --output folder). */
export function ensureLogDirs(input: Pick<BatchScriptInput, 'output' | 'error'>): void {
  for (const p of [input.output, input.error]) mkdirSync(dirname(p), { recursive: true });
}

/**
 * Writes the composed recipe `<path stem>.yaml` (variables inlined with `--resolve`; mode 600 when
 * it holds secret variables), then `<path>` (mode 755): the script runs that copy, so a copy that
 * cannot be written is an error and no script is written. Returns the copy's path.
 */
export function writeJob(path: string, script: string, job: ValidJob, resolveVars = false): string {
  mkdirSync(dirname(path), { recursive: true });
  const composed = composedPathFor(path);
  try {
    // a record of what the job runs, beside a script anyone may read: secret values are left out
    // (the job gets them from its own secret sources), and the copy is private all the same
    const redacted = redactSecretVariables(job.loaded.doc);
    const doc = resolveVars ? resolveComposed(redacted) : redacted;
    const secret = secretVariableNames(job.loaded.doc).size > 0;
    writeFileSync(composed, composeText(doc), secret ? { mode: 0o600 } : {});
    if (secret) chmodSync(composed, 0o600);
  } catch (e) {
    throw new SflowError(
      'batch.composed_not_written',
      `the composed recipe ${composed} could not be written: ${errorMessage(e)}`,
      { phase: 'run', hint: 'the job runs that copy, so no script was written; choose another -o' },
    );
  }
  writeFileSync(path, script);
  chmodSync(path, 0o755);
  return composed;
}
