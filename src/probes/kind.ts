/**
 * What a probe kind is (docs/adding-a-probe.md): one module that owns the recipe key's schema,
 * its planning, its text for events and `--dry-run`, and its check. The registry
 * (registry.ts) lists them; config builds `task.probes` from their schemas, the planner plans
 * through them, the dry-run and the orchestrator describe and check through them.
 *
 * Probes sit below config and plan (the layer table in .dependency-cruiser.cjs), so a kind gets
 * what it needs from those layers handed in: the schema vocabulary of config/schema
 * (`SchemaKit`: located messages, `${{ }}` expressions) and the plan's resolution of expressions
 * and located errors (`ProbePlanKit`). A kind imports neither layer.
 */
import type * as z from 'zod';
import type { ProbeCheck, ProbeTransport } from './types.js';

/** a string holding a `${{ }}` expression (config/schema/common.ts `Expr`) */
export type ExprText = `${string}\${{${string}`;

/** The schema helpers of config/schema (common.ts, shapes.ts) a kind builds its schema with. */
export interface SchemaKit {
  /** a mapping whose unknown keys are reported one by one with a did-you-mean hint */
  strictObject<S extends z.ZodRawShape>(label: string, shape: S): z.ZodObject<S, z.core.$strict>;
  str(opts?: { nonEmpty?: boolean }): z.ZodType<string>;
  /** an integer or a `${{ }}` expression, resolved by the plan (ProbePlanKit.int) */
  intOrExpr(o?: { min?: number; max?: number }): z.ZodType<number | ExprText>;
  literalInt(o?: { min?: number; max?: number }): z.ZodType<number>;
  /** a scalar rendered as a string */
  scalarString(): z.ZodType<string>;
  oneOf<const T extends string>(values: readonly T[]): z.ZodType<T>;
  record<T extends z.ZodType>(value: T, what: string): z.ZodRecord<z.ZodString, T>;
  list<T extends z.ZodType>(item: T, what?: string, nonEmpty?: boolean): z.ZodArray<T>;
  /** a located issue from a refinement */
  fail(
    ctx: { addIssue: (i: z.core.$ZodRawIssue) => void },
    path: (string | number)[],
    message: string,
    hint?: string,
  ): void;
  isExpr(v: unknown): v is ExprText;
}

type Path = string | (string | number)[];

/** The planner's help for one probe body: expressions resolved, errors located under the kind's key. */
export interface ProbePlanKit {
  /** the declared task's name, for messages */
  readonly task: string;
  readonly role: 'readiness' | 'failure';
  /** the task's backend as messages name it: `'b1' (Kubernetes)` */
  readonly backend: string;
  /** where the checks of the task's backend run (`capabilities.probesFrom`) */
  readonly probesFrom: 'driver' | 'cluster';
  /** an integer field, `${{ }}` resolved */
  int(value: unknown, path: Path, label: string): number;
  /** a text field, `${{ }}` rendered */
  text(value: unknown, path: Path): string;
  /** any field, `${{ }}` evaluated to a plain value */
  value(value: unknown, path: Path): unknown;
  /** a plan error located at `path` under the kind's key (or at the key itself) */
  fail(path: Path | undefined, code: string, message: string, hint?: string): never;
}

/** What a probe knows once its task is placed. */
export interface ProbePlaceFacts {
  /** addresses of the task instance's nodes, in node order */
  nodeIps: string[];
  /** the task instance's own name */
  ownName: string;
  /** the instance of another declared task matching this one's replica (a watched log) */
  instanceOf(base: string): string;
}

/** Fields every planned probe has, whatever its kind. */
export interface ProbeCommon {
  role: 'readiness' | 'failure';
  delayS: number;
  /** readiness: overall deadline in seconds (v0.3 semantics) */
  timeoutS: number;
  eachCheckTimeoutS: number;
  intervalS: number;
  successThreshold: number;
  failureThreshold: number;
  /** the concrete task whose log the probe reads, when not its own (log_watch `logger`) */
  logTask?: string;
  /** failure probes: a probe that cannot run any more (regex time limit) fails the task, or only warns */
  onError?: 'fail' | 'warn';
}

/** The task a check belongs to (a PlannedTask is one). */
export interface ProbeTask {
  name: string;
  /** the task's planned environment */
  env: Record<string, string>;
  /** the task's folder in the run folder */
  outputDir: string;
}

/** What a check gets at run time besides its planned probe. */
export interface CheckContext {
  task: ProbeTask;
  /** the log a log-reading probe reads (its own task's, or the watched task's) */
  logPath: string;
  /** tcp/http checks go through this instead of from the driver (the task's backend decides) */
  transport?: ProbeTransport;
}

/**
 * One probe kind. `D` is what `plan` makes of the recipe body before placement, `P` what the
 * planned probe carries after it (both without the common fields).
 */
export interface ProbeKindDef<N extends string, S extends z.ZodType, D, P> {
  /** the recipe key (`tcp_port`) and the planned probe's `kind` */
  readonly name: N;
  schema(kit: SchemaKit): S;
  /** the parsed body → its planned fields; pure (expressions through the kit) */
  plan(body: z.output<S>, kit: ProbePlanKit): D;
  /** the planned fields once the task instance is placed */
  place(draft: D, facts: ProbePlaceFacts): P;
  /** one short line for events and messages: `tcp_port 10.0.0.1:8000`; `self`: the probed task */
  describe(p: P & ProbeCommon, self?: string): string;
  /** the `--dry-run` text after `role: `; `timing` is the common `delay=… interval=…` part */
  dryRun(p: P & ProbeCommon, timing: string): string;
  /** the check object for one attempt (it may keep state across checks: log offsets) */
  check(p: P & ProbeCommon, ctx: CheckContext): ProbeCheck;
}

/** Declares a kind, inferring its types (so the registry can derive the planned-probe union). */
export function defineProbeKind<N extends string, S extends z.ZodType, D, P>(
  def: ProbeKindDef<N, S, D, P>,
): ProbeKindDef<N, S, D, P> {
  return def;
}
