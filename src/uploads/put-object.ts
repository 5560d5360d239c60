/**
 * One local file → one S3 object. Small files are one PutObject; files above the multipart
 * threshold go as CreateMultipartUpload + parts (a few in flight) + Complete, and an unfinished
 * multipart upload is aborted. Bodies are Buffers read from the file (a part at a time), so every
 * request can be repeated as it is. Each request has its own timeout and is retried with
 * exponential backoff when the failure is transient (network, timeout, 5xx, throttling);
 * refusals (missing bucket, denied, unknown key) fail at once. `signal` (the deadline or a
 * Ctrl-C) stops everything.
 */
import { open, readFile, stat } from 'node:fs/promises';
import type { S3Target } from './s3-client.js';
import { deadline } from '../util/deadline.js';
import { sleep } from '../util/sleep.js';
import { retryDelay, type UploadSettings } from './settings.js';

export interface PutHooks {
  /** bytes acknowledged so far (called as parts finish and periodically) */
  progress?: (sent: number, total: number) => void;
  /** a transient failure; the request is sent again after `delayMs` */
  retry?: (attempt: number, delayMs: number, error: string) => void;
}

export interface PutOutcome {
  bytes: number;
  /** 1 for a single PutObject, else the number of multipart parts */
  parts: number;
  /** the most attempts any one request needed */
  attempts: number;
}

const TRANSIENT_NAMES = new Set([
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'InternalError',
  'ServiceUnavailable',
  'RequestTimeTooSkewed',
]);

interface SdkError {
  name?: string;
  message?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
}

export function isTransient(e: unknown): boolean {
  const err = e as SdkError;
  const status = err?.$metadata?.httpStatusCode;
  if (err?.name && TRANSIENT_NAMES.has(err.name)) return true;
  if (status !== undefined) return status >= 500 || status === 429 || status === 408;
  if (err?.name === 'CredentialsProviderError') return false;
  // no HTTP answer: connection refused/reset, DNS, socket timeout
  return true;
}

/** A one-line description with nothing secret in it. */
export function describeError(e: unknown, env: NodeJS.ProcessEnv = process.env): string {
  const err = e as SdkError;
  const status = err?.$metadata?.httpStatusCode;
  let text = `${err?.name && err.name !== 'Error' ? `${err.name}: ` : ''}${err?.message ?? String(e)}`;
  if (err?.code && !text.includes(err.code)) text += ` (${err.code})`;
  if (status !== undefined) text += ` (HTTP ${status})`;
  for (const k of ['AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']) {
    const v = env[k];
    if (v && v.length >= 4) text = text.split(v).join('***');
  }
  return text.replace(/\s+/g, ' ').trim();
}

class Sender {
  maxAttempts = 1;
  constructor(
    private readonly t: S3Target,
    private readonly s: UploadSettings,
    private readonly signal: AbortSignal,
    private readonly hooks: PutHooks,
  ) {}

  /** Sends a command with a per-request timeout, retrying transient failures. */
  async send<T>(make: () => unknown): Promise<T> {
    for (let n = 1; ; n++) {
      this.maxAttempts = Math.max(this.maxAttempts, n);
      const limit = `no answer within ${this.s.requestTimeoutMs / 1000}s`;
      const one = deadline(this.s.requestTimeoutMs, [this.signal], limit);
      let err: unknown;
      try {
        return (await this.t.client.send(make() as never, { abortSignal: one.signal })) as T;
      } catch (e) {
        err =
          one.signal.aborted && !this.signal.aborted
            ? Object.assign(new Error(limit), { name: 'TimeoutError' })
            : e;
      } finally {
        one.dispose();
      }
      if (this.signal.aborted) throw abortReason(this.signal);
      if (n >= this.s.attempts || !isTransient(err)) throw err;
      const delay = retryDelay(this.s, n);
      this.hooks.retry?.(n + 1, delay, describeError(err));
      await sleep(delay, this.signal);
      if (this.signal.aborted) throw abortReason(this.signal);
    }
  }
}

function abortReason(signal: AbortSignal): Error {
  const r = signal.reason as unknown;
  return r instanceof Error ? r : new Error(String(r ?? 'aborted'));
}

export async function putFile(
  t: S3Target,
  file: string,
  key: string,
  s: UploadSettings,
  signal: AbortSignal,
  hooks: PutHooks = {},
): Promise<PutOutcome> {
  const size = (await stat(file)).size;
  const sender = new Sender(t, s, signal, hooks);
  const common = {
    Bucket: t.bucket,
    Key: key,
    ...(t.storageClass ? { StorageClass: t.storageClass as import('@aws-sdk/client-s3').StorageClass } : {}),
  };
  if (size <= s.multipartThreshold) {
    const body = await readFile(file);
    await sender.send(
      () => new t.sdk.PutObjectCommand({ ...common, Body: body, ContentLength: body.length }),
    );
    hooks.progress?.(body.length, body.length);
    return { bytes: body.length, parts: 1, attempts: sender.maxAttempts };
  }
  const created = await sender.send<{ UploadId?: string }>(
    () => new t.sdk.CreateMultipartUploadCommand(common),
  );
  const uploadId = created.UploadId;
  if (!uploadId) throw new Error('CreateMultipartUpload returned no UploadId');
  const fh = await open(file, 'r');
  try {
    const count = Math.ceil(size / s.partSize);
    const etags: string[] = new Array<string>(count);
    let next = 0;
    let sent = 0;
    // the first failing part stops the others at once (their in-flight requests are aborted)
    const stopParts = new AbortController();
    let first: unknown;
    const partsSignal = deadline(2 ** 31 - 1, [signal, stopParts.signal], 'unreachable');
    const parts = new Sender(t, s, partsSignal.signal, hooks);
    const worker = async () => {
      while (next < count && !partsSignal.signal.aborted) {
        const i = next++;
        const start = i * s.partSize;
        const len = Math.min(s.partSize, size - start);
        const buf = Buffer.allocUnsafe(len);
        const { bytesRead } = await fh.read(buf, 0, len, start);
        if (bytesRead !== len) throw new Error(`${file} changed while it was uploaded (short read)`);
        const r = await parts.send<{ ETag?: string }>(
          () =>
            new t.sdk.UploadPartCommand({
              Bucket: t.bucket,
              Key: key,
              UploadId: uploadId,
              PartNumber: i + 1,
              Body: buf,
              ContentLength: len,
            }),
        );
        etags[i] = r.ETag ?? '';
        sent += len;
        hooks.progress?.(sent, size);
      }
    };
    const settled = await Promise.allSettled(
      Array.from({ length: Math.min(s.concurrency, count) }, () =>
        worker().catch((e: unknown) => {
          first ??= e;
          stopParts.abort(e);
          throw e;
        }),
      ),
    );
    partsSignal.dispose();
    if (settled.some((r) => r.status === 'rejected')) throw first;
    if (signal.aborted) throw abortReason(signal);
    await sender.send(
      () =>
        new t.sdk.CompleteMultipartUploadCommand({
          Bucket: t.bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
        }),
    );
    return { bytes: size, parts: count, attempts: Math.max(sender.maxAttempts, parts.maxAttempts) };
  } catch (e) {
    // best effort, bounded: an abandoned multipart upload keeps costing storage until aborted
    await t.client
      .send(new t.sdk.AbortMultipartUploadCommand({ Bucket: t.bucket, Key: key, UploadId: uploadId }), {
        abortSignal: AbortSignal.timeout(Math.min(10_000, s.requestTimeoutMs)),
      })
      .catch(() => undefined);
    throw e;
  } finally {
    await fh.close();
  }
}
