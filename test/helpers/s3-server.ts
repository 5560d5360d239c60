/**
 * A real S3-compatible server for tests: s3rver, in this process, on an ephemeral loopback port, with
 * one bucket and its data in a fresh temp directory. `stop()` closes it and removes the directory.
 *
 * What it does not emulate: SigV4 signatures are not verified (any secret works; an unknown access key
 * id is refused with InvalidAccessKeyId), and there is no IAM, no versioning, no regions.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** s3rver's one built-in account */
export const S3RVER_ACCESS_KEY_ID = 'S3RVER';
export const S3RVER_SECRET_ACCESS_KEY = 'S3RVER';

export interface S3TestServer {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  port: number;
  bucket: string;
  /** where s3rver keeps the objects (removed by stop) */
  directory: string;
  /** settings for `new S3Client(...)` that reach this server */
  clientConfig(): S3ClientConfig;
  stop(): Promise<void>;
}

export async function startS3Server(bucket = 'sflow-test'): Promise<S3TestServer> {
  const directory = mkdtempSync(join(tmpdir(), 'sflow-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: bucket }],
  });
  let port: number;
  try {
    ({ port } = await server.run());
  } catch (e) {
    rmSync(directory, { recursive: true, force: true });
    throw e;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  let stopped = false;
  return {
    endpoint,
    port,
    bucket,
    directory,
    clientConfig: () => ({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: S3RVER_ACCESS_KEY_ID, secretAccessKey: S3RVER_SECRET_ACCESS_KEY },
      // s3rver predates the SDK's default CRC checksums (aws-chunked bodies with trailers)
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 2,
    }),
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await server.close();
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    },
  };
}
