/** `workflow.tasks[*]` (config §1.10). */
import * as z from 'zod';
import {
  atom,
  atomJsonSchemas,
  bool,
  describe,
  fail,
  intOrExpr,
  isPlainObject,
  str,
  strOrInt,
} from './common.js';
import { list, record, strictObject, strList } from './shapes.js';
import { TaskMonitorSchema } from './monitor.js';
import { ProbesSchema } from './probes.js';
import { ResourcesSchema } from './resources.js';
import { OutputSchema, ResultSchema } from './result.js';
import { ReplicasSchema, RetriesSchema } from './task-policies.js';
import { UploadSchema } from './uploads.js';
import { VariableSchema } from './variable.js';

const QUOTE_HINT = 'quote the line: a `key: value` line is read as a YAML mapping';

/**
 * One script line. YAML reads an unquoted `- echo "x: y"` as a one-entry mapping; like
 * nv-sflow 0.3 we take such a mapping (scalar value) back as the line `key: value`.
 */
const RECOVERABLE_JSON = {
  type: 'object',
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
};
const ScriptLine = atom<string | Record<string, unknown>>(
  { anyOf: [{ type: 'string' }, RECOVERABLE_JSON] },
  (v) => {
    if (typeof v === 'string') return undefined;
    if (isPlainObject(v)) {
      const entries = Object.entries(v);
      if (entries.length === 1 && (entries[0][1] === null || typeof entries[0][1] !== 'object'))
        return undefined;
      return {
        message: `script lines must be strings, got a mapping (${entries.map(([k]) => `'${k}'`).join(', ')})`,
        hint: QUOTE_HINT,
      };
    }
    return {
      message: `script lines must be strings, got ${describe(v)}`,
      hint: Array.isArray(v) ? QUOTE_HINT : undefined,
    };
  },
).transform((v) => {
  if (typeof v === 'string') return v;
  const [k, val] = Object.entries(v)[0];
  return val === null || val === undefined || val === '' ? `${k}:` : `${k}: ${String(val)}`;
});

/** Task-level operator reference: a name, or `{name, <override fields>…}` checked against the named operator. */
const TaskOperatorSchema = z.union([
  str({ nonEmpty: true }),
  z.looseObject({ name: str({ nonEmpty: true }) }),
]);

/** A backend name; a mapping is accepted here and rejected at plan (inline overrides unsupported). */
const TaskBackendSchema = z.union([str({ nonEmpty: true }), record(z.unknown(), 'backend')]);

const PortSchema = strictObject('port', { port: intOrExpr({ min: 1, max: 65535 }), name: str().optional() });

/** Task-level `variables` are accepted (v0.2 schema) and ignored; dict form is tolerated. */
const taskVariablesInput = z.unknown();
atomJsonSchemas.set(taskVariablesInput, (convert) => ({
  anyOf: [convert(list(VariableSchema)), { type: 'object' }],
}));
const TaskVariables = taskVariablesInput
  .transform((v) =>
    isPlainObject(v)
      ? Object.entries(v).map(([name, b]) => (isPlainObject(b) ? { ...b, name } : { name, value: b }))
      : v,
  )
  .pipe(list(VariableSchema, 'variables'));

const TASK_KEY_HINTS = {
  env: "there is no task-level 'env': variables are exported to every task's environment (the k8s operator has its own 'env')",
  command: "use 'script' (a list of shell lines)",
  cmd: "use 'script' (a list of shell lines)",
  run: "use 'script' (a list of shell lines)",
  needs: "use 'depends_on'",
  dependencies: "use 'depends_on'",
  gpus: "put GPU requests under 'resources: {gpus: {count: N}}'",
  nodes: "put node requests under 'resources: {nodes: {count: N}}'",
};

export const TaskSchema = strictObject(
  'task',
  {
    name: str({ nonEmpty: true }),
    script: list(ScriptLine, 'script', true),
    depends_on: strList('depends_on').optional(),
    /** reverse edges; absent targets are skipped */
    required_by: strList('required_by').optional(),
    operator: TaskOperatorSchema.optional(),
    backend: TaskBackendSchema.optional(),
    resources: ResourcesSchema.optional(),
    replicas: ReplicasSchema.optional(),
    retries: RetriesSchema.optional(),
    probes: ProbesSchema.optional(),
    outputs: list(OutputSchema, 'outputs').nullable().optional(),
    result: ResultSchema.optional(),
    /** `${{ }}` expressions checked after result parsing (`result.<name>`); a false one fails the task */
    assert: list(str({ nonEmpty: true }), 'assert').optional(),
    uploads: list(UploadSchema, 'uploads').optional(),
    monitor: TaskMonitorSchema.optional(),
    /** prepend `set -e` to shell scripts; default per backend */
    fail_fast: bool().optional(),
    /** accepted, never enforced (a warning is issued) */
    timeout: strOrInt().nullable().optional(),
    /** accepted and ignored (v0.2) */
    variables: TaskVariables.optional(),
    /** advertised service ports (metadata) */
    ports: list(PortSchema, 'ports').optional(),
  },
  TASK_KEY_HINTS,
).superRefine((t, ctx) => {
  if (/[/\\]/.test(t.name) || /\s/.test(t.name) || t.name.startsWith('.'))
    fail(
      ctx,
      ['name'],
      `task name '${t.name}' must not contain '/', '\\' or whitespace, nor start with '.'`,
      'task names become directory and log file names',
    );
});

export type Task = z.output<typeof TaskSchema>;
