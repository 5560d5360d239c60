/**
 * http_get / http_post: met when the endpoint answers with a status in 200–399 (redirects
 * are followed) within the per-check limit. POST sends `body` with a text/plain content
 * type unless the headers set one.
 *
 * Extensions (not in v0.2; for the schema owner to expose if wanted):
 *  - `expectStatus`: the status, or list of statuses, that count as met instead of 200–399;
 *  - `bodyMatch`: the response body must contain this literal text, or match the regex
 *    after a `re:`/`regex:` prefix, with `^`/`$` matching at line ends (first 1 MiB of
 *    the body only).
 *
 * fetch refuses the WHATWG "bad ports" (6000, 6665–6669, 5060, 10080, ...); a probe on one
 * of them reports so instead of passing.
 */

import { RegexTimeoutError, testGuarded } from '../util/guarded-regex.js';
import { compilePattern, type CompiledPattern } from './pattern.js';
import { deadline } from '../util/deadline.js';
import type { CheckResult, ProbeCheck, ProbeTransport } from './types.js';

export interface HttpCheckOptions {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  /** POST only; default empty */
  body?: string;
  expectStatus?: number | number[];
  bodyMatch?: string;
  /** send the request through this (from inside a cluster) instead of the driver's fetch */
  transport?: ProbeTransport;
}

const BODY_LIMIT = 1024 * 1024;

/** Reads at most `limit` bytes of the body as text, then cancels the rest. */
async function readBodyPrefix(res: Response, limit: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = (await reader.read()) as { done: boolean; value?: Uint8Array };
      if (done || !value) break;
      parts.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(parts).subarray(0, limit).toString('utf8');
}

/** In a body, `^` and `$` anchor at line ends (a body usually ends with a newline). */
function multiline(p: CompiledPattern): CompiledPattern {
  if (p.kind === 'literal' || p.re.multiline) return p;
  return { ...p, re: new RegExp(p.re.source, p.re.flags + 'm') };
}

/** a regex runs under a deadline (util/guarded-regex.ts); RegexTimeoutError when it runs out */
function matches(p: CompiledPattern, text: string): boolean {
  if (p.kind === 'literal') return text.includes(p.text);
  return testGuarded(p.re, text);
}

/** `ECONNREFUSED`, `timed out after 30000 ms`, ... out of fetch's nested errors. */
function describeFetchError(e: unknown, timeoutMs: number, signal: AbortSignal): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError' || err?.name === 'DeadlineError')
    return `no answer within ${timeoutMs} ms`;
  if (err?.name === 'AbortError')
    return signal.aborted ? 'check cut short' : `no answer within ${timeoutMs} ms`;
  const cause = err?.cause;
  if (cause?.code) return cause.code;
  if (cause?.message === 'bad port') return 'port refused by fetch (a WHATWG "bad port"); use another port';
  return cause?.message ?? err?.message ?? String(e);
}

export function httpCheck(opts: HttpCheckOptions): ProbeCheck {
  const kind = opts.method === 'POST' ? 'http_post' : 'http_get';
  const bodyPattern = opts.bodyMatch !== undefined ? multiline(compilePattern(opts.bodyMatch)) : undefined;
  const expected =
    opts.expectStatus === undefined
      ? undefined
      : Array.isArray(opts.expectStatus)
        ? opts.expectStatus
        : [opts.expectStatus];
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.method === 'POST' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'text/plain;charset=UTF-8';
  }
  let patternFailure: string | undefined;
  /** the verdict on one answer (from the driver's fetch or a transport): status, then the body's first MiB */
  const judge = async (
    status: number,
    head: string,
    body: { read: () => Promise<string>; skip?: () => Promise<void> },
  ): Promise<CheckResult> => {
    const statusOk = expected ? expected.includes(status) : status >= 200 && status <= 399;
    if (!statusOk || !bodyPattern) {
      await body.skip?.();
      return {
        ok: statusOk,
        detail: statusOk || !expected ? head : `${head} (expected ${expected.join('/')})`,
      };
    }
    const text = await body.read();
    let found: boolean;
    try {
      found = matches(bodyPattern, text);
    } catch (e) {
      if (!(e instanceof RegexTimeoutError)) throw e;
      patternFailure = `body pattern ${JSON.stringify(opts.bodyMatch)}: ${e.message}`;
      return { ok: false, detail: patternFailure, limit: patternFailure };
    }
    return {
      ok: found,
      detail: `${head}, body ${found ? 'matched' : 'did not match'} ${JSON.stringify(opts.bodyMatch)}`,
    };
  };
  return {
    kind,
    describe: () => `${kind} ${opts.url}`,
    async check(signal, eachCheckTimeoutMs) {
      if (patternFailure) return { ok: false, detail: patternFailure, limit: patternFailure };
      if (opts.transport) {
        const r = await opts.transport.http(
          {
            method: opts.method,
            url: opts.url,
            headers,
            ...(opts.method === 'POST' ? { body: opts.body ?? '' } : {}),
          },
          eachCheckTimeoutMs,
          signal,
        );
        if ('error' in r) return { ok: false, detail: `${r.error} (via ${opts.transport.where})` };
        const text = r.body;
        return judge(r.status, `HTTP ${r.status} (via ${opts.transport.where})`, {
          read: () => Promise.resolve(text.slice(0, BODY_LIMIT)),
        });
      }
      // a deadline, not AbortSignal.any([…, AbortSignal.timeout()]): Node 20 can collect that
      // timeout unfired while fetch waits, and a server that never answers then hangs the probe
      const bound = deadline(
        Math.max(1, eachCheckTimeoutMs),
        [signal],
        `no answer within ${eachCheckTimeoutMs} ms`,
      );
      const both = bound.signal;
      try {
        const res = await fetch(opts.url, {
          method: opts.method,
          headers,
          body: opts.method === 'POST' ? (opts.body ?? '') : undefined,
          redirect: 'follow',
          signal: both,
        });
        return await judge(res.status, `HTTP ${res.status}`, {
          read: () => readBodyPrefix(res, BODY_LIMIT),
          skip: async () => {
            await res.body?.cancel().catch(() => undefined);
          },
        });
      } catch (e) {
        return { ok: false, detail: describeFetchError(e, eachCheckTimeoutMs, signal) };
      } finally {
        bound.dispose();
      }
    },
  };
}
