/**
 * `storage:`, `task.uploads` and `workflow.upload_all` → planned uploads (artifacts-batch.md B1–B3).
 * Storage fields resolve at assembly (variables, backends, artifacts, workflow); `from`/`to`
 * resolve against the task (`task.output_dir`, `task.name`, `task.backend`, `task.operator`,
 * `task.assigned_nodes`, `task.replica_index`), `workflow.{name,run_id,output_dir}` and
 * `env.<VAR>` (the controller's environment plus the task's). Everything is known once the
 * real plan is built after allocation, so a bad expression is a located plan error that
 * `--dry-run` shows too. Globs in `from` are expanded when the task completes.
 */
import type { Scope, Value } from '../config/expr/index.js';
import type { PlannedNode, PlannedStorage, PlannedUpload, PlannedUploadAll } from './types.js';
import { planError, renderField, type Where } from '../config/resolve.js';
import type { Storage, Upload, UploadAll } from '../config/schema/uploads.js';

export function hasDotDot(key: string): boolean {
  return key.split(/[/\\]/).includes('..');
}

const optional = (v: unknown, scope: Scope, where: Where, key: string): string | undefined =>
  v === undefined || v === null
    ? undefined
    : renderField(String(v), scope, { doc: where.doc, path: [...where.path, key] });

export function planStorage(items: readonly Storage[], scope: Scope, doc: unknown): PlannedStorage[] {
  return items.map((s, i) => {
    const where = { doc, path: ['storage', i] };
    const style = optional(s.addressing_style, scope, where, 'addressing_style');
    if (style !== undefined && !['auto', 'virtual', 'path'].includes(style))
      throw planError(
        { doc, path: [...where.path, 'addressing_style'] },
        'plan.storage_addressing',
        `storage '${String(s.name)}': addressing_style must be auto, virtual or path, got '${style}'`,
      );
    const bucket = optional(s.bucket, scope, where, 'bucket') ?? '';
    if (bucket.trim() === '')
      throw planError(
        { doc, path: [...where.path, 'bucket'] },
        'plan.storage_bucket',
        `storage '${String(s.name)}': bucket resolved to an empty string`,
      );
    const region = optional(s.region, scope, where, 'region');
    const endpointUrl = optional(s.endpoint_url, scope, where, 'endpoint_url');
    const storageClass = optional(s.storage_class, scope, where, 'storage_class');
    return {
      name: String(s.name),
      type: 's3',
      bucket,
      prefix: optional(s.prefix, scope, where, 'prefix') ?? '',
      ...(region ? { region } : {}),
      ...(endpointUrl ? { endpointUrl } : {}),
      ...(style ? { addressingStyle: style as PlannedStorage['addressingStyle'] } : {}),
      ...(storageClass ? { storageClass } : {}),
    };
  });
}

export interface UploadTaskFacts {
  name: string;
  outputDir: string;
  backend: string;
  operator: string;
  nodes: PlannedNode[];
  replicaIndex: number;
  replicated: boolean;
  env: Record<string, string>;
}

/** The scope `from`/`to` are rendered in. */
export function uploadScope(
  base: Scope,
  workflow: { name: string; run_id: string; output_dir: string },
  t: UploadTaskFacts,
  inheritedEnv: NodeJS.ProcessEnv,
): Scope {
  const env: Record<string, Value> = Object.create(null) as Record<string, Value>;
  for (const [k, v] of Object.entries(inheritedEnv)) if (v !== undefined) env[k] = v;
  Object.assign(env, t.env);
  return {
    ...base,
    workflow,
    env,
    task: {
      name: t.name,
      output_dir: t.outputDir,
      backend: t.backend,
      operator: t.operator,
      assigned_nodes: t.nodes.map((n) => n.name),
      replica_index: t.replicaIndex,
    },
  };
}

const MENTIONS_TASK_NAME = /\$\{\{[^}]*\btask\s*(\.\s*name\b|\[\s*['"]name['"]\s*\])/;

function checkKey(key: string | undefined, where: Where, what: string): void {
  if (key !== undefined && hasDotDot(key))
    throw planError(
      where,
      'plan.upload_dotdot',
      `${what} must not contain '..' segments, got '${key}'`,
      'keys are relative to the storage prefix; remove the ".." parts',
    );
}

export function planTaskUploads(
  items: readonly Upload[] | undefined | null,
  scope: Scope,
  where: Where,
  t: UploadTaskFacts,
): PlannedUpload[] | null {
  if (!items || items.length === 0) return null;
  return items.map((u, j) => {
    const at = { doc: where.doc, path: [...where.path, 'uploads', j] };
    const fromTemplate = String(u.from);
    const toTemplate = u.to === undefined || u.to === null ? undefined : String(u.to);
    const from = renderField(fromTemplate, scope, { doc: at.doc, path: [...at.path, 'from'] });
    const to =
      toTemplate === undefined
        ? undefined
        : renderField(toTemplate, scope, { doc: at.doc, path: [...at.path, 'to'] });
    checkKey(to, { doc: at.doc, path: [...at.path, 'to'] }, `Task '${t.name}' upload 'to'`);
    return {
      target: String(u.target),
      from,
      ...(to !== undefined ? { to } : {}),
      onError: u.on_error === 'fail' ? 'fail' : 'warn',
      ...(u.follow_symlinks === true ? { followSymlinks: true as const } : {}),
      renameForReplica: t.replicated && !(toTemplate !== undefined && MENTIONS_TASK_NAME.test(toTemplate)),
      fromTemplate,
      ...(toTemplate !== undefined ? { toTemplate } : {}),
    };
  });
}

export function planUploadAll(
  item: UploadAll | undefined | null,
  scope: Scope,
  doc: unknown,
  runId: string,
): PlannedUploadAll | null {
  if (!item) return null;
  const where = { doc, path: ['workflow', 'upload_all'] };
  const toTemplate = item.to === undefined || item.to === null ? undefined : String(item.to);
  const to =
    toTemplate === undefined
      ? `${runId}.zip`
      : renderField(toTemplate, scope, { doc, path: [...where.path, 'to'] });
  checkKey(to, { doc, path: [...where.path, 'to'] }, "workflow.upload_all 'to'");
  return {
    target: String(item.target),
    to,
    ...(toTemplate !== undefined ? { toTemplate } : {}),
    onError: item.on_error === 'fail' ? 'fail' : 'warn',
  };
}

/** `prefix` + `key` with exactly one '/' between them (a key never starts with '/'). */
export function joinKey(prefix: string, key: string): string {
  const k = key.replace(/^\/+/, '');
  if (!prefix) return k;
  return prefix.endsWith('/') ? prefix + k : `${prefix}/${k}`;
}

/** `results.csv` + `_bench_0` → `results_bench_0.csv` (the extension is what follows the last dot). */
export function insertBeforeExtension(key: string, suffix: string): string {
  const slash = key.lastIndexOf('/');
  const name = key.slice(slash + 1);
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  return `${key.slice(0, slash + 1)}${stem}${suffix}${ext}`;
}

/** The key below the target prefix for one local file of an upload spec (B1, B2). */
export function uploadKey(u: PlannedUpload, fileName: string, taskName: string): string {
  const key = u.to === undefined ? fileName : u.to.endsWith('/') ? u.to + fileName : u.to;
  return u.renameForReplica ? insertBeforeExtension(key, `_${taskName}`) : key;
}

export function isGlob(path: string): boolean {
  return /[*?[]/.test(path);
}
