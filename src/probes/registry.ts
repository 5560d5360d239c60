/**
 * The probe registry: recipe key → its kind (kind.ts). `task.probes` in the recipe schema, the
 * planner, `--dry-run`, the events' descriptions and the checks all go through it, so adding a
 * kind is its module under kinds/, one line here and its tests (docs/adding-a-probe.md). The
 * order of the lines is the order of the keys in the schema and in messages.
 */
import type { z } from 'zod';
import type {
  CheckContext,
  ProbeCommon,
  ProbeKindDef,
  ProbePlaceFacts,
  ProbePlanKit,
  SchemaKit,
} from './kind.js';
import { execProbe } from './kinds/exec.js';
import { httpGetProbe, httpPostProbe } from './kinds/http.js';
import { logWatchProbe } from './kinds/log-watch.js';
import { tcpPortProbe } from './kinds/tcp.js';
import type { ProbeCheck } from './types.js';

export const PROBE_KINDS = {
  tcp_port: tcpPortProbe,
  http_get: httpGetProbe,
  http_post: httpPostProbe,
  log_watch: logWatchProbe,
  exec: execProbe,
} as const;

type Kinds = typeof PROBE_KINDS;
export type ProbeKindName = keyof Kinds;

/** every kind's recipe key, in registry order */
export const PROBE_KIND_NAMES = Object.keys(PROBE_KINDS) as ProbeKindName[];

type Planned<K> = K extends { place(d: never, f: never): infer P } ? P : never;
type Drafted<K> = K extends { plan(b: never, k: never): infer D } ? D : never;

/** A planned probe: the common fields and its kind's own. */
export type PlannedProbe = {
  [N in ProbeKindName]: ProbeCommon & { kind: N } & Planned<Kinds[N]>;
}[ProbeKindName];

/** A probe planned before placement (task-draft → build-tasks). */
export type ProbeDraft = {
  [N in ProbeKindName]: Omit<ProbeCommon, 'logTask'> & { kind: N; fields: Drafted<Kinds[N]> };
}[ProbeKindName];

// Signature-checked once here: each entry is a kind whose `name` is its key.
const checked: { [N in ProbeKindName]: ProbeKindDef<N, z.ZodType, unknown, unknown> } = PROBE_KINDS;

/** A kind seen through the planned-probe union (the one place the union meets the entries). */
interface AnyKind {
  readonly name: ProbeKindName;
  schema(kit: SchemaKit): z.ZodType;
  plan(body: unknown, kit: ProbePlanKit): unknown;
  place(draft: unknown, facts: ProbePlaceFacts): object;
  describe(p: PlannedProbe, self?: string): string;
  dryRun(p: PlannedProbe, timing: string): string;
  check(p: PlannedProbe, ctx: CheckContext): ProbeCheck;
}

export function isProbeKind(name: string): name is ProbeKindName {
  return Object.hasOwn(PROBE_KINDS, name);
}

/**
 * The kind of a recipe key or a planned probe. A name the registry does not hold is a bug (the
 * schema admits only registered keys), never a fall-through to another kind.
 */
export function probeKind(name: string): AnyKind {
  if (!isProbeKind(name))
    throw new Error(`unknown probe kind '${name}' (registered: ${PROBE_KIND_NAMES.join(', ')})`);
  return checked[name] as AnyKind;
}

/** short description for events and messages: `tcp_port 127.0.0.1:8000`, `log_watch "x" in srv` */
export function describeProbe(p: PlannedProbe, self?: string): string {
  return probeKind(p.kind).describe(p, self);
}
