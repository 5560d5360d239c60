/**
 * Upload limits (environment, seconds / MiB). Every S3 request is bounded, retried with
 * exponential backoff, and all uploads of one task (or the run archive) share one deadline, so
 * an unreachable or stalled store never holds the run.
 */
import { envNumber } from '../config/env-number.js';

export interface UploadSettings {
  /** one S3 request (a PutObject or one part) */
  requestTimeoutMs: number;
  /** attempts per request, first included */
  attempts: number;
  /** first retry delay, doubled for each further one (capped at 30 s) */
  retryDelayMs: number;
  /** all uploads of one task, or the run archive */
  deadlineMs: number;
  /** files larger than this go multipart */
  multipartThreshold: number;
  partSize: number;
  /** parts in flight at once */
  concurrency: number;
  progressEveryMs: number;
}

const MIB = 1024 * 1024;

export function uploadSettings(env: NodeJS.ProcessEnv = process.env): UploadSettings {
  return {
    requestTimeoutMs: envNumber(env, 'SFLOW_UPLOAD_REQUEST_TIMEOUT_S', 120, 0.1) * 1000,
    attempts: Math.floor(envNumber(env, 'SFLOW_UPLOAD_ATTEMPTS', 4, 1)),
    retryDelayMs: envNumber(env, 'SFLOW_UPLOAD_RETRY_DELAY_S', 1) * 1000,
    deadlineMs: envNumber(env, 'SFLOW_UPLOAD_DEADLINE_S', 1800, 1) * 1000,
    multipartThreshold: envNumber(env, 'SFLOW_UPLOAD_MULTIPART_THRESHOLD_MB', 16, 5) * MIB,
    // S3's smallest part (except the last) is 5 MiB
    partSize: Math.floor(envNumber(env, 'SFLOW_UPLOAD_PART_SIZE_MB', 8, 5) * MIB),
    concurrency: 4,
    progressEveryMs: 5_000,
  };
}

export function retryDelay(s: UploadSettings, attempt: number): number {
  return Math.min(30_000, s.retryDelayMs * 2 ** (attempt - 1));
}
