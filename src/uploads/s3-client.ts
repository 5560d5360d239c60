/**
 * One S3 client per storage target. Credentials come only from the AWS SDK's default chain
 * (env, shared files + AWS_PROFILE, SSO, web identity, container/instance roles); nothing is
 * configured in YAML and nothing credential-like is ever printed. Environment honoured (the SDK
 * reads most of it itself):
 * - `AWS_REGION` / `AWS_DEFAULT_REGION` / the profile's region when the target has no `region`
 *   (us-east-1 with region redirects when none is found);
 * - `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL` when the target has no `endpoint_url`;
 *   any custom endpoint defaults to path-style addressing (`addressing_style: auto`);
 * - `AWS_REQUEST_CHECKSUM_CALCULATION` / `AWS_RESPONSE_CHECKSUM_VALIDATION` (`WHEN_REQUIRED` for
 *   stores that predate the SDK's default CRC checksums).
 * The SDK's own retries are off: uploads.ts retries with backoff and reports every retry.
 */
import { errorMessage } from '../util/errors.js';
import type { S3Client } from '@aws-sdk/client-s3';
import { SflowError } from '../util/sflow-error.js';
import type { PlannedStorage } from '../plan/types.js';
import type { UploadSettings } from './settings.js';

export interface S3Target {
  name: string;
  client: S3Client;
  bucket: string;
  prefix: string;
  storageClass?: string;
  sdk: typeof import('@aws-sdk/client-s3');
}

export async function loadSdk(): Promise<typeof import('@aws-sdk/client-s3')> {
  try {
    return await import('@aws-sdk/client-s3');
  } catch (e) {
    throw new SflowError(
      'run.s3_client_missing',
      `the S3 client library cannot be loaded: ${errorMessage(e)}`,
      {
        phase: 'run',
        hint: 'reinstall sflow with its dependencies (npm install --global sflow-cli; in a checkout: npm install), which include @aws-sdk/client-s3',
      },
    );
  }
}

export function endpointFor(s: PlannedStorage, env: NodeJS.ProcessEnv): string | undefined {
  return s.endpointUrl ?? (env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined);
}

export async function openTarget(
  s: PlannedStorage,
  settings: UploadSettings,
  env: NodeJS.ProcessEnv = process.env,
): Promise<S3Target> {
  // the pinned SDK runs on Node 20; its notice about future SDK releases is not for sflow's users
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const sdk = await loadSdk();
  const endpoint = endpointFor(s, env);
  const style = s.addressingStyle ?? 'auto';
  const base = {
    ...(endpoint ? { endpoint } : {}),
    forcePathStyle: style === 'path' || (style === 'auto' && endpoint !== undefined),
    maxAttempts: 1,
    requestHandler: {
      connectionTimeout: Math.min(10_000, settings.requestTimeoutMs),
      requestTimeout: settings.requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  };
  const region = s.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined);
  let client = new sdk.S3Client({ ...base, ...(region ? { region } : {}) });
  if (!region) {
    // the profile may name one; otherwise us-east-1, following S3's redirects to the bucket's region
    const found = await client.config.region().catch(() => undefined);
    if (!found) {
      client.destroy();
      client = new sdk.S3Client({ ...base, region: 'us-east-1', followRegionRedirects: true });
    }
  }
  return {
    name: s.name,
    client,
    bucket: s.bucket,
    prefix: s.prefix,
    ...(s.storageClass ? { storageClass: s.storageClass } : {}),
    sdk,
  };
}
