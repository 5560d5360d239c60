/**
 * The receipt (spec cli.md §9.8): `<output-dir>/ssh-<UTC time>-<id>/receipt.json`, mode 0600,
 * how `sflow watch` and `sflow fetch` find a remote run again. It holds the command, the --ssh
 * text (never put secrets in --ssh: options that would carry values are refused), the remote
 * session folder and the remote sflow, the local folder, and the last state known here:
 * running | completed | failed | cancelled (a confirmed Ctrl-C) | unknown (a stop that could not
 * be confirmed). A dropped connection is not a state: the run goes on and stays `running`.
 */
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { errorCode, errorMessage } from '../util/errors.js';
import type { RemoteState } from './session-layout.js';

export interface Receipt {
  command: 'run' | 'batch' | 'compose';
  connection: string;
  remote_session: string;
  remote_sflow: string;
  local_output?: string;
  state: RemoteState;
  exit_code?: number;
  /** batch --ssh: the Slurm job id */
  job_id?: string;
  sflow_version: string;
  created: string;
  updated: string;
}

export function writeReceipt(path: string, r: Receipt): Receipt {
  const written = { ...r, updated: new Date().toISOString() };
  const text = JSON.stringify(written, null, 2) + '\n';
  writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
  chmodSync(`${path}.tmp`, 0o600);
  renameSync(`${path}.tmp`, path);
  return written;
}

/** Update the state (and exit code) of an existing receipt. */
export function updateReceipt(path: string, r: Receipt, state: RemoteState, exitCode?: number): Receipt {
  const next = { ...r, state, ...(exitCode !== undefined ? { exit_code: exitCode } : {}) };
  return writeReceipt(path, next);
}

function bad(path: string, message: string): SflowError {
  return new SflowError('remote.receipt', `${path}: ${message}`, {
    phase: 'usage',
    exitCode: 2,
    hint: 'give the receipt.json that `sflow run --ssh` wrote into <output-dir>/ssh-…/',
  });
}

export function readReceipt(path: string): Receipt {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw bad(path, errorCode(e) === 'ENOENT' ? 'no such receipt' : `not a receipt (${errorMessage(e)})`);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw bad(path, 'not a JSON object');
  const r = data as Record<string, unknown>;
  for (const key of ['command', 'connection', 'remote_session', 'remote_sflow']) {
    if (typeof r[key] !== 'string' || !r[key]) throw bad(path, `required key '${key}' is missing or empty`);
  }
  if (!['run', 'batch', 'compose'].includes(r.command as string))
    throw bad(path, `key 'command' must be run, batch or compose, got '${String(r.command)}'`);
  if (!isAbsolute(r.remote_session as string))
    throw bad(
      path,
      `key 'remote_session' must be an absolute remote path, got '${String(r.remote_session)}'`,
    );
  if (r.local_output !== undefined && typeof r.local_output !== 'string')
    throw bad(path, `key 'local_output' must be a string`);
  return r as unknown as Receipt;
}
