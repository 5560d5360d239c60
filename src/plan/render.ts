/**
 * `--dry-run` output. Everything printed comes from the Plan (plus what the loader reported: file
 * contributions, overrides, warnings). `dryRunChunks` yields the text in pieces of about
 * `CHUNK_CHARS` (the task blocks batched), so 10,000 replicas are written as they are rendered,
 * never held as one string; `renderDryRun` is the same text whole.
 */
import type { LoadedRecipe } from '../config/load.js';
import { toAscii } from '../visualize/index.js';
import { allocationMap, renderAllocationMap } from './placement/index.js';
import { planToDagView } from './dag-view.js';
import { renderMonitorPlan } from './monitor-plan.js';
import { formatDuration } from './duration.js';
import { basename } from 'node:path';
import { REDACTED, redactUrl } from '../util/redact.js';
import type {
  Plan,
  PlannedArtifact,
  PlannedProbe,
  PlannedStorage,
  PlannedTask,
  PlannedUpload,
} from './types.js';
import { isGlob, joinKey, uploadKey } from './uploads.js';
import { backendField } from './backends.js';
import { probeKind } from '../probes/registry.js';

const SHOW_LIMIT = 5;

function list(names: string[]): string {
  return names.length > SHOW_LIMIT
    ? `${names.slice(0, SHOW_LIMIT).join(', ')} … (+${names.length - SHOW_LIMIT})`
    : names.join(', ');
}

function quoteArg(a: string): string {
  if (a === '') return "''";
  return /^[A-Za-z0-9_/.,:=@%+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

export function formatCommand(argv: string[]): string {
  return argv.map(quoteArg).join(' ');
}

/**
 * formatCommand, reusing the previous text while the argv holds the same strings (the replicas
 * of a task share their script string, so the comparison is by reference in the common case)
 */
function sameCommandReused(): (argv: string[]) => string {
  let last: string[] = [];
  let text = '';
  return (argv) => {
    if (argv.length !== last.length || argv.some((a, i) => a !== last[i])) {
      last = argv;
      text = formatCommand(argv);
    }
    return text;
  };
}

/** `role: <the kind's text>`; the kind comes from the probe registry (an unknown one throws) */
function probeLine(p: PlannedProbe): string {
  const timing = `delay=${p.delayS}s interval=${p.intervalS}s ${p.role === 'readiness' ? `timeout=${p.timeoutS}s ` : ''}each_check_timeout=${p.eachCheckTimeoutS}s`;
  return `${p.role}: ${probeKind(p.kind).dryRun(p, timing)}`;
}

/** what `--dry-run` may add under a task beyond its plan (backends: registry dryRunDetails) */
export type TaskDetail = (t: PlannedTask) => string[];

function taskBlock(
  t: PlannedTask,
  i: number,
  out: string[],
  command = formatCommand,
  detail?: TaskDetail,
): void {
  out.push(`  [${i + 1}] ${t.name}`);
  out.push(
    `      backend: ${t.backend} (${t.backendType})   operator: ${t.operator.name} (${t.operator.type})`,
  );
  if (t.dependsOn.length) out.push(`      depends_on: [${t.dependsOn.map((d) => `'${d}'`).join(', ')}]`);
  out.push(`      nodes: ${t.nodes.map((n) => n.name).join(',') || '(none)'}`);
  if (t.resources) {
    const r: string[] = [];
    if (t.resources.nodes) r.push(`nodes ${JSON.stringify(t.resources.nodes)}`);
    if (t.resources.gpus) r.push(`gpus ${JSON.stringify(t.resources.gpus)}`);
    out.push(`      resources: ${r.join(', ')}`);
  }
  if (t.gpus) {
    out.push(`      CUDA_VISIBLE_DEVICES: ${t.gpus.join(',')}`);
    out.push(`      release_after: gpus=${t.releaseAfter.gpus ?? '-'} nodes=${t.releaseAfter.nodes}`);
  } else if (t.gpuSlots) {
    out.push(
      `      GPUs: ${t.gpuSlots.length} per node, counted as slot(s) ${t.gpuSlots.join(',')} (the device plugin picks the devices)`,
    );
    out.push(`      release_after: gpus=${t.releaseAfter.gpus ?? '-'} nodes=${t.releaseAfter.nodes}`);
  }
  if (t.engineNames) out.push(`      ${t.engineNames.what}: ${t.engineNames.names.join(', ')}`);
  if (t.colocated)
    out.push(
      `      merged pod ${t.colocated.group}: ${t.colocated.members.join(', ')}${t.colocated.gatedOn.length ? `; gated_on=${t.colocated.gatedOn.join(',')}` : ''}`,
    );
  if (t.replicaCount > 1 || t.name !== t.base)
    out.push(`      replica: ${t.replicaIndex + 1}/${t.replicaCount} of ${t.base} (${t.policy})`);
  const sweep = Object.entries(t.sweep);
  if (sweep.length) out.push(`      sweep: ${sweep.map(([k, v]) => `${k}=${v}`).join(', ')}`);
  out.push(`      output: ${t.outputDir}`);
  out.push(
    `      retries: ${t.retries ? `${t.retries.count}x, interval=${t.retries.intervalS}s, backoff=${t.retries.backoff}` : 'none'}`,
  );
  if (t.failFast) out.push('      fail_fast: true (set -e)');
  for (const p of [...t.probes.readiness, ...t.probes.failure]) out.push(`      probe ${probeLine(p)}`);
  if (t.result)
    out.push(
      `      result: ${t.result.file ? `file ${t.result.file}` : t.result.patterns.map((p) => p.name).join(', ')} → result.json`,
    );
  for (const a of t.asserts ?? []) out.push(`      assert: ${a.source}`);
  if (t.outputs) out.push(`      outputs: ${t.outputs.length} pattern(s) → outputs.json`);
  for (const u of t.uploads ?? []) out.push(`      upload: ${uploadLine(u, t.name)}`);
  const cfg = Object.entries(t.operator.config).filter(
    ([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0),
  );
  if (cfg.length)
    out.push(
      `      operator config: ${cfg.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ')}`,
    );
  out.push(`      command: ${command(t.argv)}`);
  // one command per node (a container per host): the others, each as it will run
  for (const spec of t.launch.slice(1))
    if (spec.argv.join('\0') !== t.argv.join('\0'))
      out.push(`      command (node ${spec.node?.name ?? spec.nodeIndex}): ${formatCommand(spec.argv)}`);
  if (t.scriptFile)
    out.push(
      `      script file: ${t.scriptFile} (${Buffer.byteLength(t.script)} bytes, too large for one argument; written when the run starts)`,
    );
  if (detail) for (const l of detail(t)) out.push(l);
}

/** the size (UTF-16 code units) from which the collected lines are yielded as one piece */
export const CHUNK_CHARS = 64 * 1024;

/** The dry-run text whole, without the final newline. */
export function renderDryRun(
  plan: Plan,
  loaded: LoadedRecipe,
  opts: { quiet?: boolean; taskDetail?: TaskDetail } = {},
): string {
  return [...dryRunChunks(plan, loaded, opts)].join('').slice(0, -1);
}

/**
 * The dry-run text in order, in pieces that each end with a newline (the last line too); their
 * concatenation is `renderDryRun` plus '\n'.
 */
export function* dryRunChunks(
  plan: Plan,
  loaded: LoadedRecipe,
  opts: { quiet?: boolean; taskDetail?: TaskDetail } = {},
): Generator<string, void, undefined> {
  const mask = secretMask(plan);
  for (const piece of planChunks(plan, loaded, opts)) yield mask(piece);
}

/**
 * Hides the values of secret variables wherever they appear in the text (a command that inlines
 * one, an environment line); values shorter than 4 characters are masked only where the plan shows
 * the variable itself (masking every `1` would garble the plan).
 */
function secretMask(plan: Plan): (text: string) => string {
  const values = new Set<string>();
  for (const v of plan.variables)
    if (v.secret) for (const x of [v.rendered, ...(v.domain ?? [])]) if (x.length >= 4) values.add(x);
  if (values.size === 0) return (text) => text;
  const longestFirst = [...values].sort((a, b) => b.length - a.length);
  return (text) => longestFirst.reduce((t, x) => t.split(x).join(REDACTED), text);
}

function* planChunks(
  plan: Plan,
  loaded: LoadedRecipe,
  opts: { quiet?: boolean; taskDetail?: TaskDetail },
): Generator<string, void, undefined> {
  const out: string[] = [
    `Dry-run: ${plan.workflow}`,
    '',
    ...compositionLines(loaded),
    ...pathLines(plan),
    ...overrideLines(plan, loaded),
    ...variableLines(plan),
    ...artifactLines(plan),
    ...orderLines(plan),
    ...backendLines(plan),
    ...allocationLines(plan),
    ...storageLines(plan),
    ...renderMonitorPlan(plan),
    'DAG:',
    ...toAscii(planToDagView(plan))
      .split('\n')
      .map((l) => `  ${l}`),
    '',
  ];
  if (!opts.quiet) yield* taskPlanChunks(plan, out, opts.taskDetail);
  const warnings = [...loaded.warnings.map((w) => w.message), ...plan.warnings];
  if (warnings.length) out.push('Warnings:', ...warnings.map((w) => `  ⚠ ${w}`), '');
  out.push(`Dry-run complete: ${plan.workflow}`);
  yield piece(out);
}

/** The files of a composed recipe and what each contributed; the missable references removed. */
function compositionLines(loaded: LoadedRecipe): string[] {
  const out: string[] = [];
  if (loaded.files.length > 1) {
    out.push(`Composition (${loaded.files.length} files, merged in order):`);
    for (const c of loaded.contributions) {
      out.push(`  ${c.file}`);
      for (const s of c.sections) out.push(`    ${s.section}: ${list(s.names)}`);
    }
    out.push('');
  }
  if (loaded.missableRemovals.length) {
    out.push(`Missable tasks: removed ${loaded.missableRemovals.length} reference(s) to absent tasks:`);
    for (const r of loaded.missableRemovals) out.push(`  - ${r}`);
    out.push('');
  }
  return out;
}

function pathLines(plan: Plan): string[] {
  return [
    `workspace_dir: ${plan.paths.workspaceDir}`,
    `output_dir: ${plan.paths.outputDir}`,
    `workflow_output_dir (planned, not created): ${plan.paths.runDir}`,
    ...(plan.workflowTimeoutS
      ? [`workflow timeout: ${formatDuration(plan.workflowTimeoutS)} (the run is stopped when it passes)`]
      : []),
    '',
  ];
}

/** `--set` and `--artifact` overrides; a secret variable's value is redacted. */
function overrideLines(plan: Plan, loaded: LoadedRecipe): string[] {
  if (!(loaded.setOverrides.length || loaded.artifactOverrides.length)) return [];
  const secret = new Set(plan.variables.filter((v) => v.secret).map((v) => v.name));
  return [
    'Overrides:',
    ...loaded.setOverrides.map(
      (s) =>
        `  --set ${s.key}=${secret.has(s.key) ? REDACTED : s.raw}${s.isDomain ? '  (domain sweep)' : ''}`,
    ),
    ...loaded.artifactOverrides.map((a) => `  --artifact ${a.name}=${a.uri}`),
    '',
  ];
}

/** The first 200 variables with type, domain and scope; secrets redacted. */
function variableLines(plan: Plan): string[] {
  if (!plan.variables.length) return [];
  const out = ['Variables:'];
  for (const v of plan.variables.slice(0, 200)) {
    const value = v.secret ? `${REDACTED} (secret)` : v.rendered;
    const domain = v.domain && (v.secret ? v.domain.map((_, k) => `secret${k}`) : v.domain);
    out.push(
      `  ${v.name} = ${value}${v.type !== 'string' ? ` (${v.type})` : ''}${domain ? `  domain: [${domain.join(', ')}]` : ''}${v.scope === 'workflow' ? '  [workflow]' : ''}`,
    );
  }
  if (plan.variables.length > 200) out.push(`  … (+${plan.variables.length - 200} more)`);
  out.push('');
  return out;
}

function artifactLines(plan: Plan): string[] {
  if (!plan.artifacts.length) return [];
  return ['Artifacts:', ...plan.artifacts.map((a) => `  ${artifactLine(a)}`), ''];
}

function orderLines(plan: Plan): string[] {
  return [
    `Tasks: ${plan.tasks.length}`,
    `Topological order: ${plan.order.length > 50 ? `${plan.order.slice(0, 50).join(' → ')} … (+${plan.order.length - 50})` : plan.order.join(' → ')}`,
    '',
  ];
}

/** Each backend: type, allocation, nodes, the allocate command and its settings worth showing. */
function backendLines(plan: Plan): string[] {
  const used = new Set(plan.tasks.map((t) => t.backend));
  const out = [`Backends: ${plan.backends.map((b) => b.name).join(', ')} (used: ${[...used].join(', ')})`];
  for (const b of plan.backends) {
    out.push(
      `  ${b.name}: type=${b.type}${b.isDefault ? ', default' : ''}, allocation=${b.placeholder ? '0 (placeholder)' : b.type}`,
    );
    out.push(
      `    nodes: ${b.nodes.map((n) => `${n.name}(${n.ip}${n.numGpus !== null ? `, ${n.numGpus} GPUs` : ''})`).join(', ')}`,
    );
    if (b.placeholder) out.push('    (placeholder hosts for planning only — never contacted)');
    const alloc = b.allocateCommand;
    if (alloc) out.push(`    allocate: ${typeof alloc === 'string' ? alloc : formatCommand(alloc)}`);
    const details = [
      'account',
      'partition',
      'time',
      'job_name',
      'namespace',
      'compute_domain',
      'image',
      'extra_args',
    ]
      .map((k): [string, unknown] => [k, backendField(b, k)])
      .filter(([, v]) => v !== undefined && v !== null);
    if (details.length)
      out.push(
        `    ${details.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ')}`,
      );
    for (const n of b.notes ?? []) out.push(`    ${n}`);
  }
  out.push('');
  return out;
}

/** The allocation map: which task holds which node and GPUs. */
function allocationLines(plan: Plan): string[] {
  const map = renderAllocationMap(
    allocationMap(
      plan.tasks.map((t) => ({
        task: t.name,
        backend: t.backend,
        nodes: t.nodes,
        gpus: t.gpus ?? t.gpuSlots ?? null,
        gpusPerNode: (t.gpus ?? t.gpuSlots)?.length ?? null,
        releaseAfter: t.releaseAfter,
        warnings: [],
      })),
      Object.fromEntries(plan.backends.map((b) => [b.name, b.nodes])),
    ),
  );
  return map.length ? [...map, ''] : [];
}

/** Storage targets and the planned upload of the run folder (`workflow.upload_all`). */
function storageLines(plan: Plan): string[] {
  const out: string[] = [];
  if (plan.storage.length) {
    out.push('Storage targets:');
    for (const s of plan.storage) out.push(`  ${storageLine(s)} (not contacted in dry-run)`);
    out.push('');
  }
  if (plan.uploadAll) {
    const u = plan.uploadAll;
    const target = plan.storage.find((s) => s.name === u.target);
    out.push(
      `Planned workflow upload: run directory (zip) → ${u.target}:${u.toTemplate ?? u.to}` +
        `${target ? ` = s3://${target.bucket}/${joinKey(target.prefix, u.to)}` : ''} (on_error=${u.onError})`,
      '',
    );
  }
  return out;
}

/** "Task plan:" and one block per task, yielded in chunks of about CHUNK_CHARS (10,000 tasks stream). */
function* taskPlanChunks(
  plan: Plan,
  out: string[],
  detail: TaskDetail | undefined,
): Generator<string, void, undefined> {
  out.push('Task plan:');
  yield piece(out);
  let size = 0;
  const command = sameCommandReused();
  for (let i = 0; i < plan.tasks.length; i++) {
    const from = out.length;
    taskBlock(plan.tasks[i], i, out, command, detail);
    for (let j = from; j < out.length; j++) size += out[j].length + 1;
    if (size >= CHUNK_CHARS) {
      yield piece(out);
      size = 0;
    }
  }
  out.push('');
}

function piece(out: string[]): string {
  const text = out.join('\n') + '\n';
  out.length = 0;
  return text;
}

function uploadLine(u: PlannedUpload, task: string): string {
  const name = isGlob(u.from) ? '<each match>' : basename(u.from);
  return `${u.from} → ${u.target}:${uploadKey(u, name, task)} (on_error=${u.onError}${u.renameForReplica ? ', replica suffix' : ''})`;
}

function storageLine(s: PlannedStorage): string {
  const extra = [
    s.prefix ? `prefix=${s.prefix}` : '',
    s.region ? `region=${s.region}` : '',
    s.endpointUrl ? `endpoint=${redactUrl(s.endpointUrl)}` : '',
    s.addressingStyle ? `addressing=${s.addressingStyle}` : '',
    s.storageClass ? `storage_class=${s.storageClass}` : '',
  ].filter(Boolean);
  return `${s.name}: ${s.type} bucket=${s.bucket}${extra.length ? ` ${extra.join(' ')}` : ''}`;
}

const ARTIFACT_NOTES: Record<string, string> = {
  http: ' (downloaded at run start unless already cached)',
  https: ' (downloaded at run start unless already cached)',
  hf: ' (downloaded from the Hugging Face Hub at run start; files already cached are reused)',
  huggingface: ' (downloaded from the Hugging Face Hub at run start; files already cached are reused)',
  docker: ' (image made present at run start on every Docker engine a task runs on)',
};

function artifactLine(a: PlannedArtifact): string {
  const web = a.scheme === 'http' || a.scheme === 'https';
  const note =
    a.content !== undefined ? ' (inline content, written at run start)' : (ARTIFACT_NOTES[a.scheme] ?? '');
  return `${a.name}: ${web ? redactUrl(a.uri) : a.uri} → ${a.path}${note}`;
}
