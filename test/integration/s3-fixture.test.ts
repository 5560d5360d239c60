/**
 * The S3 test fixture really stores objects: put/get, a 20 MB multipart upload read back with the same
 * SHA-256, listing, and the two failures an uploader must report (missing bucket, unknown access key).
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server, type S3TestServer } from '../helpers/s3-server.js';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('S3 test server (s3rver)', () => {
  let s3: S3TestServer;
  let client: S3Client;

  beforeAll(async () => {
    s3 = await startS3Server('sflow-results');
    client = new S3Client(s3.clientConfig());
  });
  afterAll(async () => {
    client?.destroy();
    await s3?.stop();
  });

  it('listens on an ephemeral loopback port', () => {
    expect(s3.port).toBeGreaterThan(0);
    expect(s3.endpoint).toBe(`http://127.0.0.1:${s3.port}`);
  });

  it('stores an object and returns it, under a key with slashes', async () => {
    const key = 'run-1/task-a/result.json';
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: '{"ok":true}' }));
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    expect(await got.Body!.transformToString()).toBe('{"ok":true}');
    const list = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'run-1/' }));
    expect(list.Contents?.map((o) => o.Key)).toEqual([key]);
  });

  it('takes a 20 MB multipart upload and returns the same bytes', async () => {
    const data = randomBytes(20 * 1024 * 1024);
    const key = 'run-1/big.bin';
    const partSize = 5 * 1024 * 1024; // S3's smallest part but the last
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: key }));
    const parts = [];
    for (let i = 0, n = 1; i < data.length; i += partSize, n++) {
      const body = data.subarray(i, i + partSize);
      const { ETag } = await client.send(
        new UploadPartCommand({ Bucket: s3.bucket, Key: key, UploadId, PartNumber: n, Body: body }),
      );
      parts.push({ ETag, PartNumber: n });
    }
    expect(parts).toHaveLength(4);
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: s3.bucket,
        Key: key,
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
    const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }));
    expect(head.ContentLength).toBe(data.length);
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    expect(sha256(await got.Body!.transformToByteArray())).toBe(sha256(data));
  });

  it('refuses a missing bucket with NoSuchBucket', async () => {
    await expect(
      client.send(new PutObjectCommand({ Bucket: 'no-such-bucket', Key: 'x', Body: 'x' })),
    ).rejects.toMatchObject({ name: 'NoSuchBucket' });
  });

  it('refuses an unknown access key id (the one credential check it makes)', async () => {
    const stranger = new S3Client({
      ...s3.clientConfig(),
      credentials: { accessKeyId: 'NOT-A-KEY', secretAccessKey: 'x' },
    });
    try {
      await expect(
        stranger.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'x', Body: 'x' })),
      ).rejects.toMatchObject({ name: 'InvalidAccessKeyId' });
    } finally {
      stranger.destroy();
    }
  });
});

describe('S3 test server lifecycle', () => {
  it('stop() closes the port and removes the data directory', async () => {
    const s3 = await startS3Server();
    await s3.stop();
    expect(existsSync(s3.directory)).toBe(false);
    const res = await fetch(s3.endpoint).then(
      () => 'answered',
      () => 'refused',
    );
    expect(res).toBe('refused');
  });
});
