/**
 * `http_get` / `http_post`: ready when the URL answers 200–399 (or one of `expected_status`), and,
 * with `body_match`, the body's first MiB holds the text (or matches the `re:` pattern). The two
 * kinds share this module; the check is ../http.ts.
 */
import * as z from 'zod';
import { httpCheck } from '../http.js';
import { defineProbeKind, type ProbePlanKit, type SchemaKit } from '../kind.js';
import { compilePattern, PatternError } from '../pattern.js';

interface HttpPlanned {
  url: string;
  headers?: Record<string, string>;
  /** statuses that count as up (default 200–399) */
  expectStatus?: number[];
  /** the body must contain this text (or match it with a `re:` prefix) */
  bodyMatch?: string;
  /** POST only: the request body */
  body?: string;
}

function httpUrlCheck(k: SchemaKit) {
  return (u: { url: string }, ctx: { addIssue: (i: z.core.$ZodRawIssue) => void }) => {
    if (!k.isExpr(u.url) && !/^https?:\/\//i.test(u.url.trim()))
      k.fail(ctx, ['url'], `http probe URL must start with http:// or https://, got '${u.url}'`);
  };
}

function schema(k: SchemaKit, method: 'GET' | 'POST') {
  const status = k.literalInt({ min: 100, max: 599 });
  return k
    .strictObject(`http_${method.toLowerCase()} probe`, {
      url: k.str({ nonEmpty: true }),
      headers: k.record(k.scalarString(), 'headers').optional(),
      ...(method === 'POST' ? { body: k.str().optional() } : {}),
      /** extension: statuses that count as up (default: any 200–399) */
      expected_status: z.union([status, z.array(status).min(1)]).optional(),
      /** extension: the body must contain this text (or match it, with a `re:` prefix) */
      body_match: k.str().optional(),
    })
    .superRefine(httpUrlCheck(k));
}

type HttpBody = z.output<ReturnType<typeof schema>> & { body?: string };

function plan(kind: string, method: 'GET' | 'POST', b: HttpBody, k: ProbePlanKit): HttpPlanned {
  const url = k.text(b.url, 'url');
  if (!/^https?:\/\//i.test(url))
    k.fail(
      'url',
      'plan.probe_url',
      `${kind} probe of task '${k.task}': unsupported URL scheme in '${url}'`,
      'use an http:// or https:// URL',
    );
  const out: HttpPlanned = { url };
  if (b.headers) out.headers = Object.fromEntries(Object.entries(b.headers).map(([n, v]) => [n, String(v)]));
  if (b.expected_status !== undefined && b.expected_status !== null)
    out.expectStatus = (Array.isArray(b.expected_status) ? b.expected_status : [b.expected_status]).map(
      Number,
    );
  if (typeof b.body_match === 'string') {
    try {
      compilePattern(b.body_match);
    } catch (e) {
      if (!(e instanceof PatternError)) throw e;
      k.fail('body_match', 'plan.probe_pattern', e.message, e.hint);
    }
    out.bodyMatch = b.body_match;
  }
  if (method === 'POST') out.body = b.body === undefined || b.body === null ? '' : k.text(b.body, 'body');
  return out;
}

function httpKind<N extends 'http_get' | 'http_post'>(name: N, method: 'GET' | 'POST') {
  return defineProbeKind({
    name,
    schema: (k) => schema(k, method),
    plan: (body: HttpBody, k) => plan(name, method, body, k),
    place: (d) => d,
    describe: (p) => `${name} ${p.url}`,
    dryRun: (p, timing) =>
      `${name} ${p.url}${p.expectStatus ? ` status in [${p.expectStatus.join(', ')}]` : ''}${
        p.bodyMatch !== undefined ? ` body ~ ${JSON.stringify(p.bodyMatch)}` : ''
      } (${timing})`,
    check: (p, ctx) =>
      httpCheck({
        method,
        url: p.url,
        headers: p.headers,
        body: p.body,
        ...(p.expectStatus ? { expectStatus: p.expectStatus } : {}),
        ...(p.bodyMatch !== undefined ? { bodyMatch: p.bodyMatch } : {}),
        ...(ctx.transport ? { transport: ctx.transport } : {}),
      }),
  });
}

export const httpGetProbe = httpKind('http_get', 'GET');
export const httpPostProbe = httpKind('http_post', 'POST');
