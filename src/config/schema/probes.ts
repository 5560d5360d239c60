/** `task.probes` (config §1.14): readiness/failure, each one probe or a list of probes. */
import * as z from 'zod';
import { fail, intOrExpr, isExpr, literalInt, msg, oneOf, scalarString, str } from './common.js';
import { list, record, strictObject } from './shapes.js';

export const PROBE_TYPES = ['tcp_port', 'http_get', 'http_post', 'log_watch'] as const;
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

const TcpPortSchema = strictObject('tcp_port probe', {
  port: intOrExpr({ min: 1, max: 65535 }),
  /** default: the first assigned node's IP */
  host: str().optional(),
  on_node: oneOf(['first', 'each']).optional(),
});

function httpUrlCheck(u: { url: string }, ctx: Parameters<typeof fail>[0]) {
  if (!isExpr(u.url) && !/^https?:\/\//i.test(u.url.trim()))
    fail(ctx, ['url'], `http probe URL must start with http:// or https://, got '${u.url}'`);
}

const HttpGetSchema = strictObject('http_get probe', {
  url: str({ nonEmpty: true }),
  headers: record(scalarString(), 'headers').optional(),
  /** extension: statuses that count as up (default: any 200–399) */
  expected_status: z
    .union([literalInt({ min: 100, max: 599 }), z.array(literalInt({ min: 100, max: 599 })).min(1)])
    .optional(),
  /** extension: the body must contain this text (or match it, with a `re:` prefix) */
  body_match: str().optional(),
}).superRefine(httpUrlCheck);

const HttpPostSchema = strictObject('http_post probe', {
  url: str({ nonEmpty: true }),
  headers: record(scalarString(), 'headers').optional(),
  body: str().optional(),
  /** extension: statuses that count as up (default: any 200–399) */
  expected_status: z
    .union([literalInt({ min: 100, max: 599 }), z.array(literalInt({ min: 100, max: 599 })).min(1)])
    .optional(),
  /** extension: the body must contain this text (or match it, with a `re:` prefix) */
  body_match: str().optional(),
}).superRefine(httpUrlCheck);

const LogWatchSchema = strictObject('log_watch probe', {
  /** literal substring unless prefixed with `re:` / `regex:` */
  regex_pattern: str({ nonEmpty: true }).optional(),
  /** alias of regex_pattern; moved there on output */
  match_pattern: str({ nonEmpty: true }).optional(),
  /** base name of the task whose log is watched (default: own task) */
  logger: str().optional(),
  match_count: intOrExpr({ min: 1 }).optional(),
})
  .superRefine((l, ctx) => {
    const { regex_pattern: r, match_pattern: m } = l;
    if (r !== undefined && m !== undefined && r !== m)
      fail(ctx, ['match_pattern'], "Only one of 'regex_pattern' or 'match_pattern' may be set, not both");
    else if (r === undefined && m === undefined)
      fail(ctx, [], "Either 'regex_pattern' or 'match_pattern' must be set");
  })
  .transform(({ match_pattern, regex_pattern, ...rest }) => ({
    regex_pattern: (regex_pattern ?? match_pattern) as string,
    ...rest,
  }));

const timing = () => intOrExpr({ min: 0 }).optional();
const threshold = () => intOrExpr({ min: 1 }).optional();

export const ProbeSchema = strictObject('probe', {
  tcp_port: TcpPortSchema.optional(),
  http_get: HttpGetSchema.optional(),
  http_post: HttpPostSchema.optional(),
  log_watch: LogWatchSchema.optional(),
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
