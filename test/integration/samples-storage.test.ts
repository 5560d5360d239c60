/**
 * The storage samples end to end on this machine against a real S3-compatible server (s3rver in
 * this process; the CLI spawned asynchronously, found through AWS_ENDPOINT_URL as the samples'
 * headers say): storage_upload's per-task files land under <prefix>/<run id>/ and read back
 * equal to the run's; storage_upload_all's run archive holds the run folder.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sflowAsync } from '../helpers/cli-async.js';
import { onlyRunDir } from '../helpers/run-dir.js';
import { S3RVER_ACCESS_KEY_ID, startS3Server, type S3TestServer } from '../helpers/s3-server.js';
import { resultValues, sample } from '../helpers/standins.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const BUCKET = 'sample-results';
let s3: S3TestServer;
let client: S3Client;
const dir = mkdtempSync(join(tmpdir(), 'sflow-samples-s3-'));

beforeAll(async () => {
  s3 = await startS3Server(BUCKET);
  client = new S3Client(s3.clientConfig());
});
afterAll(async () => {
  client?.destroy();
  await s3?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** only the test's AWS settings (no profile or instance metadata of this machine) */
function env(): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AWS_')) out[k] = v;
  return {
    ...out,
    HOME: dir,
    AWS_ACCESS_KEY_ID: S3RVER_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: 'not-checked-by-s3rver',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: join(dir, 'none'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
    AWS_ENDPOINT_URL: s3.endpoint,
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
  };
}

async function run(name: string) {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const r = await sflowAsync(
    ['run', '-f', sample(`local/${name}`), '-s', `BUCKET=${BUCKET}`, '-s', 'PREFIX=ci'],
    {
      cwd,
      env: env(),
      timeoutMs: 90_000,
    },
  );
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return onlyRunDir(join(cwd, 'sflow_output'));
}

async function keys(prefix: string): Promise<string[]> {
  const r = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (r.Contents ?? []).map((o) => o.Key!).sort();
}
async function object(key: string): Promise<Buffer> {
  const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return Buffer.from(await got.Body!.transformToByteArray());
}

describe('the storage samples against an S3-compatible server', () => {
  it('storage_upload: each task uploads its files when it completes, under the run id', async () => {
    const runDir = await run('storage_upload');
    const id = runDir.split('/').pop()!;
    expect(await keys(`ci/${id}/`)).toEqual(
      [`ci/${id}/measure/metrics.csv`, `ci/${id}/measure/result.json`, `ci/${id}/measure/summary.json`, `ci/${id}/report/report.log`].sort(),
    ); // prettier-ignore
    for (const f of ['metrics.csv', 'summary.json'])
      expect((await object(`ci/${id}/measure/${f}`)).toString()).toBe(
        readFileSync(join(runDir, 'measure', f), 'utf8'),
      );
    expect(resultValues(runDir, 'measure')).toEqual({ throughput: 42.5 });
    expect((await object(`ci/${id}/report/report.log`)).toString()).toContain('"status": "ok"');
  });

  it('storage_upload_all: the run folder as one zip under archive/<run id>.zip', async () => {
    const runDir = await run('storage_upload_all');
    const id = runDir.split('/').pop()!;
    expect(await keys('ci/archive/')).toEqual([`ci/archive/${id}.zip`]);
    const zip = await object(`ci/archive/${id}.zip`);
    expect(zip.subarray(0, 2).toString()).toBe('PK');
    for (const f of ['generate/numbers.txt', 'total/result.json', 'sflow_summary.log'])
      expect(zip.includes(Buffer.from(f)), f).toBe(true);
    expect(resultValues(runDir, 'total')).toEqual({ total: 5050 });
    expect(readdirSync(runDir)).toContain('report.html');
  });
});
