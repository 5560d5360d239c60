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
import { formatSflowError, isSflowError, SflowError } from '../config/errors.js';
import { composedPathFor, type BatchScriptInput } from './batch-script.js';
import { composeText } from './compose.js';
import { resolveComposed } from '../config/compose-resolve.js';
import { runPreflight } from './run-preflight.js';
import { errorMessage } from '../util/errors.js';
import { missingSecrets, redactSecretVariables, type SecretSources } from '../config/secret-variables.js';
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
  const batchBackend = plan.backends.find((b) => b.capabilities.batch);
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
    ...(nodes !== undefined ? { nodes } : {}),
    ...(j.gpusPerNode !== undefined && typeof gpn === 'number' ? { gpusPerNode: gpn } : {}),
    warnings,
  };
}

export interface BatchSetup {
  common: BatchCommon;
  partition: string;
  account: string;
  /** the script's fixed parts (everything but the job's files, overrides and node count) */
  base: Omit<BatchScriptInput, 'files' | 'sets' | 'artifacts' | 'missable' | 'nodes' | 'jobName'>;
  jobName: string;
  cliSets: string[];
  cliArtifacts: string[];
  cliMissable: string[];
  nodes?: number;
  gpusPerNode?: number;
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
 * Writes `<path>` (mode 755) and the composed recipe `<path stem>.yaml` (variables inlined with
 * `--resolve`); returns that path.
 */
export function writeJob(path: string, script: string, job: ValidJob, resolveVars = false): string {
  mkdirSync(dirname(path), { recursive: true });
  const composed = composedPathFor(path);
  try {
    // a record of what the job runs, beside a script anyone may read: secret values are left out
    const doc = redactSecretVariables(job.loaded.doc);
    writeFileSync(composed, composeText(resolveVars ? resolveComposed(doc) : doc));
  } catch (e) {
    process.stderr.write(`⚠ composed recipe not written to ${composed}: ${errorMessage(e)}\n`);
  }
  writeFileSync(path, script);
  chmodSync(path, 0o755);
  return composed;
}
