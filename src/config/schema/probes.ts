/**
 * `task.probes` (config §1.14): readiness/failure, each one probe or a list of probes. A probe is
 * the common timing keys and exactly one kind key, whose schema its kind owns (the probe registry,
 * src/probes/registry.ts); the kinds get this folder's helpers through `SCHEMA_KIT`.
 */
import * as z from 'zod';
import { PROBE_KIND_NAMES, PROBE_KINDS, type ProbeKindName } from '../../probes/registry.js';
import type { SchemaKit } from '../../probes/kind.js';
import { fail, intOrExpr, isExpr, literalInt, msg, oneOf, scalarString, str } from './common.js';
import { list, record, strictObject } from './shapes.js';

/** every probe kind's key, in the registry's order */
export const PROBE_TYPES: readonly ProbeKindName[] = PROBE_KIND_NAMES;
/** v0.3 defaults, for consumers (the schema leaves absent keys absent). */
export const PROBE_DEFAULTS = {
  delay: 0,
  timeout: 1200,
  each_check_timeout: 30,
  interval: 5,
  success_threshold: 1,
  failure_threshold: 3,
  match_count: 1,
} as const;

/** what a probe kind builds its schema with */
export const SCHEMA_KIT: SchemaKit = {
  strictObject: (label, shape) => strictObject(label, shape),
  str,
  intOrExpr,
  literalInt,
  scalarString,
  oneOf: (values) => oneOf(values),
  record,
  list,
  fail,
  isExpr,
};

type KindSchemas = { [N in ProbeKindName]: z.ZodOptional<ReturnType<(typeof PROBE_KINDS)[N]['schema']>> };

function kindSchemas(): KindSchemas {
  const out: Partial<Record<ProbeKindName, z.ZodType>> = {};
  for (const name of PROBE_KIND_NAMES) out[name] = PROBE_KINDS[name].schema(SCHEMA_KIT).optional();
  return out as KindSchemas;
}

const timing = () => intOrExpr({ min: 0 }).optional();
const threshold = () => intOrExpr({ min: 1 }).optional();

export const ProbeSchema = strictObject('probe', {
  ...kindSchemas(),
  delay: timing(),
  /** v0.3: overall readiness deadline (seconds) */
  timeout: timing(),
  each_check_timeout: timing(),
  interval: timing(),
  success_threshold: threshold(),
  failure_threshold: threshold(),
  /**
   * sflow extension, failure probes: when the probe cannot run any more (its pattern hit the regex
   * time limit), `fail` (default) fails the task, `warn` only reports it and goes on
   */
  on_error: oneOf(['fail', 'warn']).optional(),
}).superRefine((p, ctx) => {
  const set = PROBE_TYPES.filter((t) => p[t] !== undefined);
  if (set.length !== 1)
    fail(
      ctx,
      [],
      set.length === 0
        ? 'Exactly one probe type must be specified, found none'
        : `Exactly one probe type must be specified, found ${set.join(' and ')}`,
      `probe types: ${PROBE_TYPES.join(', ')}; put several probes in a list to combine them`,
    );
});

/** Marks a probe list that was written as a single probe (so paths can point at the source). */
const WAS_SINGLE = Symbol('sflow.singleProbe');

function oneOrMany(kind: string) {
  return z
    .union([
      ProbeSchema,
      list(ProbeSchema, kind).min(1, { error: msg(`${kind} probe list cannot be empty`), abort: true }),
    ])
    .transform((v) => {
      if (Array.isArray(v)) return v;
      const arr = [v];
      Object.defineProperty(arr, WAS_SINGLE, { value: true, enumerable: false });
      return arr;
    });
}

/** Source path of probe `k` of a (normalised) probe list. */
export function probeSourcePath(probes: readonly unknown[], k: number): (string | number)[] {
  return (probes as unknown as Record<symbol, unknown>)[WAS_SINGLE] ? [] : [k];
}

export const ProbesSchema = strictObject('probes', {
  readiness: oneOrMany('readiness').optional(),
  failure: oneOrMany('failure').optional(),
}).superRefine((p, ctx) => {
  // a readiness probe that cannot run can never pass: it always fails its task
  (p.readiness ?? []).forEach((r, k) => {
    if (r.on_error !== undefined)
      fail(
        ctx,
        ['readiness', ...probeSourcePath(p.readiness ?? [], k), 'on_error'],
        'on_error applies to failure probes only',
        'a readiness probe that cannot run can never pass, so its task fails; remove on_error here',
      );
  });
});

export type Probe = z.output<typeof ProbeSchema>;
export type Probes = z.output<typeof ProbesSchema>;
