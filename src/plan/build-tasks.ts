/**
 * Phase 7 of the plan: scripts that read `task.*`, each concrete task's environment and the
 * launch specs its operator produces (one per node for per-node operators, each with its own
 * `SFLOW_TASK_NODE_INDEX`).
 */
import { join } from 'node:path';
import { renderValue, type Scope } from '../config/expr/index.js';
import { planError } from '../config/resolve.js';
import type { ResolvedVariable } from '../config/variables.js';
import { containerCli as containerCliOf } from '../operators/docker-run.js';
import { KERNEL_ARG_LIMIT, launchSpecs, operatorOf, scriptTooLargeForArgv } from '../operators/index.js';
import type { Operator } from '../operators/types.js';
import type { TaskPlacement } from './placement/types.js';
import type { ReplicaInstance } from './replicas.js';
import { instanceAssertions, type AssertionDraft } from './assertions.js';
import { refuseNulInTask } from '../config/nul-check.js';
import { childPath, folderName } from './folder-name.js';
import { finaliseProbe, type ProbeDraft } from './probes.js';
import { finishScript, plannedResult, type Draft } from './task-draft.js';
import { taskNamespace, type TaskFacts } from './task-namespace.js';
import type { PlanPaths, PlannedArtifact, PlannedNode, PlannedTask, PlannedUpload } from './types.js';
import { planTaskUploads, uploadScope } from './uploads.js';

export function baseEnvironment(
  vars: Map<string, ResolvedVariable>,
  artifacts: { name: string; path: string }[],
  dirs: PlanPaths,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const a of artifacts) if (!vars.has(a.name)) env[a.name] = a.path;
  for (const v of vars.values()) env[v.name] = v.value === null ? 'None' : renderValue(v.value);
  env.SFLOW_WORKSPACE_DIR = dirs.workspaceDir;
  env.SFLOW_OUTPUT_DIR = dirs.outputDir;
  env.SFLOW_WORKFLOW_OUTPUT_DIR = dirs.runDir;
  env.SFLOW_WORKFLOW_RESULT_FILE = join(dirs.runDir, 'results.json');
  return env;
}

export interface FinishInput {
  drafts: Draft[];
  placements: Map<string, TaskPlacement<PlannedNode>>;
  deps: Map<string, string[]>;
  scope: Scope;
  vars: Map<string, ResolvedVariable>;
  artifacts: PlannedArtifact[];
  paths: PlanPaths;
  /** each draft's `assert:` expressions (checked before placement) */
  asserts?: Map<Draft, AssertionDraft[]>;
  /** plan warnings (a script too large for its operator) */
  warnings?: string[];
  /** the workflow's name and run id, and the controller's environment: what upload paths read */
  workflow: string;
  runId: string;
  env: NodeJS.ProcessEnv;
}

/** `workflow.*` as upload paths see it (artifacts-batch.md B2). */
export function workflowFacts(
  s: { workflow: string; paths: PlanPaths },
  runId: string,
): { name: string; run_id: string; output_dir: string } {
  return { name: s.workflow, run_id: runId, output_dir: s.paths.runDir };
}

/** A task's `uploads:` with `from`/`to` resolved against the task, the workflow and `env.*`. */
function taskUploads(
  f: FinishInput,
  d: Draft,
  inst: { name: string; replicaIndex: number },
  outputDir: string,
  nodes: PlannedNode[],
  env: Record<string, string>,
): PlannedUpload[] | null {
  const items = d.item.uploads;
  // the scope copies the driver's environment: built only for a task that has uploads
  if (!items || items.length === 0) return null;
  const facts = {
    name: inst.name,
    outputDir,
    backend: d.backend.name,
    operator: d.operator.name,
    nodes,
    replicaIndex: inst.replicaIndex,
    replicated: d.expansion.replicated,
    env,
  };
  const scope = uploadScope(
    f.scope,
    workflowFacts({ workflow: f.workflow, paths: f.paths }, f.runId),
    facts,
    f.env,
  );
  return planTaskUploads(items, scope, d.where, facts);
}

/** What every task of the plan shares while it is finished. */
interface FinishContext {
  f: FinishInput;
  /** every concrete task's facts, when a script reads `task.` (else empty) */
  facts: TaskFacts[];
  taskScope: Scope;
  /** each base name's instances, for a probe's logger of the same replica */
  instancesOf: Map<string, string[]>;
  baseEnv: Record<string, string>;
  inRunDir: (name: string) => string;
  containerCli: string;
  artifactPaths: string[];
}

/** What every replica of one draft shares: its operator, script and probes. */
interface DraftPlan {
  d: Draft;
  operator: Operator;
  script: string;
  /** the script is too large for one argument: written to a file where the operator can */
  bigScript: boolean;
  allocationId: string;
  backendJobId: string;
  readiness: ProbeDraft[];
  failure: ProbeDraft[];
}

export function finishTasks(f: FinishInput): PlannedTask[] {
  const c = finishContext(f);
  const planned: PlannedTask[] = [];
  for (const d of f.drafts) {
    const dp = planDraft(c, d);
    for (const inst of d.expansion.instances) planned.push(planInstance(c, dp, inst));
  }
  return planned;
}

function finishContext(f: FinishInput): FinishContext {
  // the `task` namespace (one record per concrete task) only when a script line reads `task.`
  const facts = f.drafts.some((d) => d.pass2.length > 0) ? taskFactsOf(f) : [];
  return {
    f,
    facts,
    taskScope: facts.length ? { ...f.scope, task: taskNamespace(facts) } : f.scope,
    instancesOf: new Map(f.drafts.map((d) => [d.base, d.expansion.instances.map((x) => x.name)])),
    baseEnv: baseEnvironment(f.vars, f.artifacts, f.paths),
    inRunDir: childPath(f.paths.runDir),
    containerCli: containerCliOf(f.env),
    artifactPaths: f.artifacts.filter((a) => a.scheme === 'fs' || a.scheme === 'file').map((a) => a.path),
  };
}

/** The draft's operator (an unknown type is a located plan error), its finished script and probes. */
function planDraft(c: FinishContext, d: Draft): DraftPlan {
  const operator = operatorOf(d.operator.type);
  if (!operator) {
    throw planError(
      { doc: d.where.doc, path: [...d.where.path, 'operator'] },
      'plan.unknown_operator_type',
      `task '${d.base}' uses operator type '${d.operator.type}', which this version of sflow cannot run`,
    );
  }
  const script = finishScript(d, c.taskScope, c.facts);
  const bigScript = scriptTooLargeForArgv(script);
  if (bigScript && !operator.scriptFromFile && scriptTooLargeForArgv(script, KERNEL_ARG_LIMIT))
    c.f.warnings?.push(
      `${d.base}: its script is ${Buffer.byteLength(script)} bytes, more than one command-line argument may hold (128 KiB); operator '${d.operator.type}' passes it as one, so its launch will fail with E2BIG (use the bash operator, or keep the script in a file the task runs)`,
    );
  return {
    d,
    operator,
    script,
    bigScript,
    // the same for every replica of the draft
    allocationId: d.backend.placeholder ? '0' : (d.backend.nodes[0]?.allocation ?? d.backend.name),
    // SFLOW_BACKEND_JOB_ID: the engine's job (a Slurm job id) where the backend has one, else the run id
    backendJobId: d.backend.nodes[0]?.allocation ?? c.f.runId,
    readiness: d.probes.filter((x) => x.role === 'readiness'),
    failure: d.probes.filter((x) => x.role === 'failure'),
  };
}

/**
 * The environment of one replica: the workflow's, its sweep values, then the SFLOW_* facts of its
 * placement. Stores into a fresh object, not a `{ ...baseEnv, … }` literal: a spread copy gets a
 * hidden class of its own (with its own descriptors), ~0.7 KB more per replica kept by the plan;
 * the stores follow the first replica's transitions. Same keys in the same order as the spread.
 */
function replicaEnv(
  c: FinishContext,
  dp: DraftPlan,
  inst: ReplicaInstance,
  p: TaskPlacement<PlannedNode>,
  sweep: Record<string, string>,
  outputDirTask: string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k in c.baseEnv) env[k] = c.baseEnv[k];
  for (const k in sweep) env[k] = sweep[k];
  env.SFLOW_TASK_OUTPUT_DIR = outputDirTask;
  env.SFLOW_TASK_NAME = inst.name;
  env.SFLOW_REPLICA_INDEX = String(inst.replicaIndex);
  env.SFLOW_TASK_ASSIGNED_NODE_NAMES = nodeList(p.nodes, 'name');
  env.SFLOW_TASK_ASSIGNED_NODE_IPS = nodeList(p.nodes, 'ip');
  env.SFLOW_TASK_NUM_NODES = String(p.nodes.length);
  env.SFLOW_TASK_NODE_INDEX = '0';
  // per node in launchSpecs; a Slurm step and a Kubernetes pod take the engine's own value
  env.SFLOW_TASK_NODE_NAME = p.nodes[0]?.name ?? '';
  env.SFLOW_BACKEND_JOB_ID = dp.backendJobId;
  env.SFLOW_LEADER_ADDRESS = p.nodes[0]?.ip ?? '127.0.0.1';
  env.SFLOW_TASK_RESULT_FILE = `${outputDirTask}/result.json`;
  // SFLOW_GPU_PLAN: the planned host GPU indices of the task on its node(s) (identical on each)
  if (p.gpus && p.gpus.length) env.CUDA_VISIBLE_DEVICES = env.SFLOW_GPU_PLAN = p.gpus.join(',');
  return env;
}

/** One concrete task: its folder, environment, launch specs, probes, assertions and uploads. */
function planInstance(c: FinishContext, dp: DraftPlan, inst: ReplicaInstance): PlannedTask {
  const { f } = c;
  const { d, operator, script } = dp;
  const p = f.placements.get(inst.name)!;
  const folder = folderName(inst.name);
  const outputDirTask = c.inRunDir(folder);
  // = join(outputDirTask, name): it ends in a plain segment (its folder), never in a separator
  const inTaskDir = (name: string): string => `${outputDirTask}/${name}`;
  const scriptFile =
    dp.bigScript && operator.scriptFromFile
      ? inTaskDir(`${folder}${operator.shell ? '.sh' : '.script'}`)
      : undefined;
  const sweep: Record<string, string> = {};
  for (const k in inst.sweep) sweep[k] = renderValue(inst.sweep[k]);
  // what the plan shows and records: a secret's value stands as `secret<k>`
  const shown = inst.masked ? { ...sweep, ...inst.masked } : sweep;
  const env = replicaEnv(c, dp, inst, p, sweep, outputDirTask);
  const loggerInstance = (base: string): string => {
    const list = c.instancesOf.get(base) ?? [base];
    return list[Math.min(inst.replicaIndex, list.length - 1)];
  };
  const launch = launchSpecs(operator, {
    task: inst.name,
    type: d.operator.type,
    config: d.operator.config,
    script,
    nodes: p.nodes,
    gpus: p.gpus,
    env,
    allocationId: dp.allocationId,
    backendConfig: d.backend.config,
    removeContainers: !d.backend.capabilities.removesContainers,
    containerCli: c.containerCli,
    artifactPaths: c.artifactPaths,
    logPath: inTaskDir(`${folder}.log`),
    ...(scriptFile ? { scriptFile } : {}),
  });
  // NUL cannot reach a process (argv and environment are C strings): a located plan error
  for (const spec of launch)
    refuseNulInTask(inst.name, spec.argv, spec.env === env ? env : { ...env, ...spec.env }, d.where);
  const asserts = instanceAssertions(f.asserts?.get(d) ?? [], f.scope, inst.sweep);
  const probe = (drafts: ProbeDraft[]) =>
    drafts.map((x) => finaliseProbe(x, p.nodes, inst.name, loggerInstance));
  return {
    name: inst.name,
    base: d.base,
    replicaIndex: inst.replicaIndex,
    replicaCount: d.expansion.instances.length,
    policy: d.expansion.policy,
    sweep: shown,
    backend: d.backend.name,
    backendType: d.backend.type,
    operator: d.operator,
    dependsOn: f.deps.get(inst.name) ?? [],
    script,
    ...(scriptFile ? { scriptFile } : {}),
    argv: launch[0].argv,
    env,
    launch,
    nodes: p.nodes,
    gpus: p.gpus,
    ...(p.gpuSlots ? { gpuSlots: p.gpuSlots } : {}),
    resources: d.hasResources ? d.resources : null,
    releaseAfter: p.releaseAfter,
    retries: d.retries,
    probes: { readiness: probe(dp.readiness), failure: probe(dp.failure) },
    result: plannedResult(d.item.result),
    ...(asserts ? { asserts } : {}),
    outputs: Array.isArray(d.item.outputs)
      ? d.item.outputs.map((o) => ({
          pattern: String(o.pattern),
          source: String(o.source ?? 'stdout'),
        }))
      : null,
    uploads: taskUploads(f, d, inst, outputDirTask, p.nodes, env),
    monitor: d.item.monitor ?? null,
    failFast: d.failFast,
    outputDir: outputDirTask,
    logPath: inTaskDir(`${folder}.log`),
  };
}

/** every concrete task's facts, for the `task` namespace of scripts */
function taskFactsOf(f: FinishInput): TaskFacts[] {
  const facts: TaskFacts[] = [];
  for (const d of f.drafts) {
    for (const inst of d.expansion.instances) {
      const p = f.placements.get(inst.name)!;
      facts.push({
        name: inst.name,
        base: d.base,
        replicated: d.expansion.replicated,
        nodes: p.nodes,
        gpus: p.gpus,
        backend: d.backend.name,
        operator: d.operator.name,
      });
    }
  }
  return facts;
}

/** the nodes' names or addresses, comma-separated (one node: its own string, nothing built) */
function nodeList(nodes: PlannedNode[], key: 'name' | 'ip'): string {
  return nodes.length === 1 ? nodes[0][key] : nodes.map((n) => n[key]).join(',');
}
