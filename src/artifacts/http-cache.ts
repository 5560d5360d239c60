/**
 * http(s):// artifacts (artifacts-batch.md A2): downloaded once on the controller into the cache
 * file the plan names (`<workspace>/.sflow_cache/artifacts/http_<sha256(uri)[:16]>`) and reused
 * by every later run. Bounded: a deadline for the response headers, an idle limit between
 * chunks and a total deadline; network errors and 5xx/429 are retried with backoff. The body
 * goes to a private temporary file renamed into place only when complete (a crash or a
 * concurrent run never leaves a half file under the cache name). Progress is reported every
 * few seconds. URLs are printed with query values and passwords hidden.
 */
import { errorMessage } from '../util/errors.js';
import { createWriteStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { envNumber } from '../config/env-number.js';
import { redactUrl } from '../util/redact.js';
import { deadline } from '../util/deadline.js';
import { sleep } from '../util/sleep.js';
import { isProcessAlive } from '../util/process-liveness.js';

export interface DownloadSettings {
  /** response headers must arrive within this (ms) */
  headersTimeoutMs: number;
  /** no byte for this long aborts the attempt (ms) */
  idleTimeoutMs: number;
  /** all attempts together (ms) */
  totalTimeoutMs: number;
  attempts: number;
  retryDelayMs: number;
  progressEveryMs: number;
}

/** Settings from SFLOW_DOWNLOAD_* (seconds), with defaults. */
export function downloadSettings(env: NodeJS.ProcessEnv = process.env): DownloadSettings {
  return {
    headersTimeoutMs: envNumber(env, 'SFLOW_DOWNLOAD_CONNECT_TIMEOUT_S', 30) * 1000,
    idleTimeoutMs: envNumber(env, 'SFLOW_DOWNLOAD_IDLE_TIMEOUT_S', 60) * 1000,
    totalTimeoutMs: envNumber(env, 'SFLOW_DOWNLOAD_TIMEOUT_S', 3600) * 1000,
    attempts: Math.max(1, Math.floor(envNumber(env, 'SFLOW_DOWNLOAD_ATTEMPTS', 3))),
    retryDelayMs: envNumber(env, 'SFLOW_DOWNLOAD_RETRY_DELAY_S', 2) * 1000,
    progressEveryMs: 5_000,
  };
}

class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    statusText: string,
  ) {
    super(`HTTP ${status} ${statusText}`.trim());
  }
}

const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;

/** What a finished download must be (a mismatch fails the attempt, which is retried). */
export interface DownloadExpect {
  size?: number;
  /** hex SHA-256 of the body */
  sha256?: string;
}

const MAX_REDIRECTS = 10;

/**
 * GET with redirects followed by hand: request headers go along only while the origin stays the
 * same (an `Authorization` never reaches another host, e.g. a CDN the Hub redirects to).
 */
export async function fetchFollowing(
  uri: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<Response> {
  let url = uri;
  let sent = headers;
  for (let hop = 0; ; hop++) {
    const res = await fetch(url, { signal, redirect: 'manual', headers: sent });
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) return res;
    await res.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
    const next = new URL(location, url);
    if (next.origin !== new URL(url).origin) sent = {};
    url = next.href;
  }
}

/** One attempt: GET into `tmp`, reporting progress. */
async function attempt(
  uri: string,
  tmp: string,
  s: DownloadSettings,
  total: AbortSignal,
  progress: (line: string) => void,
  headers: Record<string, string> = {},
  want: DownloadExpect = {},
): Promise<number> {
  const ctl = new AbortController();
  const onTotal = () => ctl.abort(total.reason);
  total.addEventListener('abort', onTotal, { once: true });
  let idle = setTimeout(
    () => ctl.abort(new Error(`no response within ${s.headersTimeoutMs / 1000}s`)),
    s.headersTimeoutMs,
  );
  try {
    const res = await fetchFollowing(uri, headers, ctl.signal);
    if (!res.ok || !res.body) throw new HttpStatusError(res.status, res.statusText);
    const hash = want.sha256 ? createHash('sha256') : undefined;
    const expected = Number(res.headers.get('content-length') ?? NaN);
    let got = 0;
    const started = Date.now();
    let nextReport = started + s.progressEveryMs;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () => ctl.abort(new Error(`no data for ${s.idleTimeoutMs / 1000}s`)),
        s.idleTimeoutMs,
      );
    };
    arm();
    const body = Readable.fromWeb(res.body);
    body.on('data', (chunk: Buffer) => {
      got += chunk.length;
      hash?.update(chunk);
      arm();
      const now = Date.now();
      if (now >= nextReport) {
        nextReport = now + s.progressEveryMs;
        const pct =
          Number.isFinite(expected) && expected > 0 ? ` (${Math.floor((100 * got) / expected)}%)` : '';
        progress(
          `${mib(got)}${Number.isFinite(expected) ? ` of ${mib(expected)}` : ''}${pct}, ${Math.round((now - started) / 1000)}s`,
        );
      }
    });
    await pipeline(body, createWriteStream(tmp, { mode: 0o644 }), { signal: ctl.signal });
    if (Number.isFinite(expected) && got !== expected)
      throw new Error(`connection closed after ${got} of ${expected} bytes`);
    if (want.size !== undefined && got !== want.size)
      throw new Error(`got ${got} bytes, the listing says ${want.size}`);
    if (hash && want.sha256) {
      const sum = hash.digest('hex');
      if (sum !== want.sha256.toLowerCase())
        throw new Error(`SHA-256 ${sum.slice(0, 12)}… differs from the listed ${want.sha256.slice(0, 12)}…`);
    }
    return got;
  } catch (e) {
    // the abort reason says why (deadline, idle, headers) better than a generic AbortError
    if (ctl.signal.aborted && ctl.signal.reason instanceof Error) throw ctl.signal.reason;
    throw e;
  } finally {
    clearTimeout(idle);
    total.removeEventListener('abort', onTotal);
  }
}

function retriable(e: unknown): boolean {
  if (e instanceof HttpStatusError) return e.status >= 500 || e.status === 429 || e.status === 408;
  return true; // network errors, resets, timeouts
}

/** Temporary files of downloads whose process is gone (killed mid-download) are removed. */
function removeStaleParts(path: string): void {
  const dir = dirname(path);
  const prefix = `${basename(path)}.part-`;
  for (const f of readdirSync(dir)) {
    if (!f.startsWith(prefix)) continue;
    const pid = Number(f.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && !isProcessAlive(pid)) rmSync(join(dir, f), { force: true });
  }
}

export interface DownloadOutcome {
  path: string;
  cached: boolean;
  bytes?: number;
  attempts?: number;
}

/**
 * Makes `path` hold the body of `uri`: reuses the cache file when it exists, else downloads it.
 * Throws an Error naming the redacted URI on failure; the cache file is never left partial.
 */
export async function downloadToCache(
  uri: string,
  path: string,
  o: {
    settings?: DownloadSettings;
    say: (line: string) => void;
    label: string;
    signal?: AbortSignal;
    /** request headers (an Authorization goes only to the URI's own origin) */
    headers?: Record<string, string>;
    /** size and checksum the body must have */
    expect?: DownloadExpect;
    /** download again even when the cache file exists */
    replace?: boolean;
  },
): Promise<DownloadOutcome> {
  if (existsSync(path) && !o.replace) return { path, cached: true };
  const s = o.settings ?? downloadSettings();
  const shown = redactUrl(uri);
  mkdirSync(dirname(path), { recursive: true });
  removeStaleParts(path);
  const limit = deadline(
    s.totalTimeoutMs,
    [o.signal],
    `the download deadline passed (SFLOW_DOWNLOAD_TIMEOUT_S=${s.totalTimeoutMs / 1000})`,
  );
  const total = limit.signal;
  o.say(`⇣ ${o.label}: downloading ${shown}`);
  let last: unknown;
  try {
    for (let n = 1; n <= s.attempts; n++) {
      const tmp = `${path}.part-${process.pid}-${randomBytes(4).toString('hex')}`;
      try {
        const bytes = await attempt(
          uri,
          tmp,
          s,
          total,
          (p) => o.say(`⏳ ${o.label}: ${p}`),
          o.headers,
          o.expect,
        );
        renameSync(tmp, path);
        return { path, cached: false, bytes, attempts: n };
      } catch (e) {
        rmSync(tmp, { force: true });
        last = e;
        if (total.aborted || !retriable(e) || n === s.attempts) break;
        const delay = s.retryDelayMs * 2 ** (n - 1);
        o.say(
          `↻ ${o.label}: ${errorMessage(e)}; retrying in ${delay / 1000}s (attempt ${n + 1}/${s.attempts})`,
        );
        await sleep(delay, total);
      }
    }
  } finally {
    limit.dispose();
  }
  throw new Error(`download of ${shown} failed: ${last === undefined ? 'aborted' : errorMessage(last)}`);
}
