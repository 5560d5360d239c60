/**
 * Runs uploaded by `workflow.upload_all` (one zip of the run folder each) under an
 * `s3://bucket/prefix`: listed with ListObjectsV2, fetched with GetObject, through the same
 * client, credentials chain, endpoint variables and request limits as the uploads
 * (src/uploads/s3-client.ts). Every request is bounded and retried with backoff. An archive's
 * fingerprint is its ETag and size, so a second collect fetches only new or replaced archives.
 */
import { openTarget, type S3Target } from '../uploads/s3-client.js';
import { retryDelay, uploadSettings, type UploadSettings } from '../uploads/settings.js';
import { SflowError } from '../util/sflow-error.js';
import { errorMessage } from '../util/errors.js';
import type { FoundRun } from './local-source.js';
import type { RunFiles } from './run-rows.js';
import { zipEntries, zipEntryData, type ZipEntry } from './zip-read.js';

export function parseS3Uri(uri: string): { bucket: string; prefix: string } | undefined {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
  return m ? { bucket: m[1], prefix: m[2] } : undefined;
}

async function retried<T>(what: string, s: UploadSettings, call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
      const final = status >= 400 && status < 500 && status !== 429; // refused: asking again will not help
      if (final || attempt >= s.attempts)
        throw new SflowError('results.s3', `${what}: ${errorMessage(e)} (after ${attempt} attempts)`, {
          phase: 'run',
          hint: 'credentials come from the AWS chain (AWS_PROFILE, AWS_ACCESS_KEY_ID …); a custom store needs AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL',
          cause: e,
        });
      await new Promise((r) => setTimeout(r, retryDelay(s, attempt)));
    }
  }
}

/** The run folder inside an archive: files at its top, or under one folder (the run id). */
export function archiveFiles(location: string, buf: Buffer): RunFiles {
  const entries = zipEntries(buf);
  let base = '';
  if (!entries.has('events.jsonl')) {
    const ledger = [...entries.keys()].find((k) => /^[^/]+\/events\.jsonl$/.test(k));
    if (ledger) base = ledger.slice(0, -'events.jsonl'.length);
  }
  const cache = new Map<string, string | undefined>();
  return {
    location,
    read(rel) {
      if (!cache.has(rel)) {
        const e: ZipEntry | undefined = entries.get(base + rel);
        cache.set(rel, e ? zipEntryData(buf, e).toString('utf8') : undefined);
      }
      return cache.get(rel);
    },
    list(dir) {
      const p = `${base}${dir}/`;
      return [...entries.keys()]
        .filter((k) => k.startsWith(p) && !k.endsWith('/'))
        .map((k) => k.slice(base.length));
    },
  };
}

export interface S3Runs {
  runs: FoundRun[];
  /** fetches the archives of the runs asked for (in parallel, a few at a time) */
  fetch(runs: FoundRun[]): Promise<Map<string, RunFiles>>;
  close(): void;
}

export async function s3Runs(uri: string, env: NodeJS.ProcessEnv = process.env): Promise<S3Runs> {
  const loc = parseS3Uri(uri);
  if (!loc) throw new SflowError('results.s3_uri', `${uri}: expected s3://bucket/prefix`, { phase: 'usage' });
  const settings = uploadSettings(env);
  const target: S3Target = await openTarget({ name: 'results', type: 's3', ...loc }, settings, env);
  const { client, sdk, bucket } = target;
  const runs: FoundRun[] = [];
  let token: string | undefined;
  do {
    const page = await retried(`listing ${uri}`, settings, () =>
      client.send(
        new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: loc.prefix, ContinuationToken: token }),
      ),
    );
    for (const o of page.Contents ?? []) {
      if (!o.Key?.endsWith('.zip')) continue;
      const where = `s3://${bucket}/${o.Key}`;
      runs.push({ key: where, fingerprint: `${o.ETag ?? ''}:${o.Size ?? 0}`, files: () => ({}) as never });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  runs.sort((a, b) => a.key.localeCompare(b.key));
  return {
    runs,
    async fetch(wanted) {
      const out = new Map<string, RunFiles>();
      const queue = [...wanted];
      const worker = async () => {
        for (let r = queue.shift(); r; r = queue.shift()) {
          const key = r.key.slice(`s3://${bucket}/`.length);
          const body = await retried(`fetching ${r.key}`, settings, async () => {
            const res = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }));
            return Buffer.from(await res.Body!.transformToByteArray());
          });
          out.set(r.key, archiveFiles(r.key, body));
        }
      };
      await Promise.all(Array.from({ length: settings.concurrency }, worker));
      return out;
    },
    close: () => client.destroy(),
  };
}
