/**
 * Uploads of one run (artifacts-batch.md B2–B3): `forTask` runs a COMPLETED task's `uploads:`
 * (globs and folders expanded now, keys = prefix + `to` + the file name or its path in the
 * folder, replica suffixes), `uploadAll` zips the run
 * directory for `workflow.upload_all`. Every file is reported on the event stream (start,
 * progress, retry, done/failed). A failure never throws: it is reported, and a spec with
 * `on_error: fail` makes `forTask`/`uploadAll` return the reason (the caller fails the task or
 * the run). Each task's uploads, and the archive, share one deadline; `abort()` (Ctrl-C) stops
 * them at once.
 */
import { errorMessage } from '../util/errors.js';
import { mkdirSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, join, resolve } from 'node:path';
import type { Plan, PlannedStorage, PlannedTask } from '../plan/types.js';
import { joinKey, uploadKey } from '../plan/uploads.js';
import type { RunEventInput } from '../events/events.js';
import { fromRoot, uploadSources, type UploadSource } from './glob.js';
import { describeError, putFile } from './put-object.js';
import { openTarget, type S3Target } from './s3-client.js';
import { uploadSettings, type UploadSettings } from './settings.js';
import { zipDirectory } from './zip-dir.js';
import { deadline, type Deadline } from '../util/deadline.js';

interface Spec {
  task?: string;
  target: string;
  onError: 'warn' | 'fail';
}

/** the event fields of a failure: `cancelled` when the task was cancelled while it uploaded */
function failureExtra(started: number, cancelled?: AbortSignal): { durationMs: number; cancelled?: true } {
  return { durationMs: Date.now() - started, ...(cancelled?.aborted ? { cancelled: true as const } : {}) };
}

export class Uploader {
  private readonly targets = new Map<string, Promise<S3Target>>();
  private readonly stop = new AbortController();
  private readonly warned = new Set<string>();
  private readonly inflight = new Set<Promise<unknown>>();
  readonly settings: UploadSettings;

  constructor(
    private readonly plan: Plan,
    private readonly emit: (e: RunEventInput) => void,
    private readonly env: NodeJS.ProcessEnv = process.env,
    settings?: UploadSettings,
  ) {
    this.settings = settings ?? uploadSettings(env);
  }

  /** Stops every upload in flight (Ctrl-C). */
  abort(reason = 'interrupted'): void {
    this.stop.abort(new Error(reason));
  }

  /** Waits (≤ 10 s) for uploads still settling (after abort()), so their outcome is reported; closes the clients. */
  async close(): Promise<void> {
    if (this.inflight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.inflight]),
        new Promise((r) => (timer = setTimeout(r, 10_000))),
      ]);
      clearTimeout(timer);
    }
    for (const t of this.targets.values()) (await t.catch(() => undefined))?.client.destroy();
  }

  private storage(name: string): PlannedStorage {
    const s = this.plan.storage.find((x) => x.name === name);
    if (!s) throw new Error(`unknown storage target '${name}'`);
    return s;
  }

  private target(s: PlannedStorage): Promise<S3Target> {
    let t = this.targets.get(s.name);
    if (!t) this.targets.set(s.name, (t = openTarget(s, this.settings, this.env)));
    return t;
  }

  private deadline(cancelled?: AbortSignal): Deadline {
    return deadline(
      this.settings.deadlineMs,
      [this.stop.signal, cancelled],
      `the upload deadline passed (SFLOW_UPLOAD_DEADLINE_S=${this.settings.deadlineMs / 1000})`,
    );
  }

  private failed(
    spec: Spec,
    from: string,
    dest: string,
    error: string,
    extra: { durationMs?: number; cancelled?: true } = {},
  ): string {
    this.emit({ type: 'upload', phase: 'failed', ...spec, from, dest, error, ...extra });
    return error;
  }

  /** One file; returns the error text on failure. */
  private async one(
    spec: Spec,
    file: string,
    from: string,
    s: PlannedStorage,
    key: string,
    signal: AbortSignal,
    announced = false,
    cancelled?: AbortSignal,
  ) {
    const dest = `s3://${s.bucket}/${key}`;
    const started = Date.now();
    let nextProgress = started + this.settings.progressEveryMs;
    try {
      const target = await this.target(s);
      if (!announced) this.emit({ type: 'upload', phase: 'start', ...spec, from, dest });
      const r = await putFile(target, file, key, this.settings, signal, {
        progress: (sent, total) => {
          const now = Date.now();
          if (now < nextProgress || sent >= total) return;
          nextProgress = now + this.settings.progressEveryMs;
          this.emit({
            type: 'upload',
            phase: 'progress',
            ...spec,
            from,
            dest,
            bytes: total,
            sent,
            durationMs: now - started,
          });
        },
        retry: (attempt, delayMs, error) =>
          this.emit({
            type: 'upload',
            phase: 'retry',
            ...spec,
            from,
            dest,
            attempt,
            delayS: delayMs / 1000,
            error,
          }),
      });
      this.emit({
        type: 'upload',
        phase: 'done',
        ...spec,
        from,
        dest,
        bytes: r.bytes,
        parts: r.parts,
        attempt: r.attempts,
        durationMs: Date.now() - started,
      });
      return undefined;
    } catch (e) {
      // cancelled: the reason names the task and why (an aborted request says only "aborted")
      const why = cancelled?.aborted
        ? errorMessage(cancelled.reason)
        : describeError(e, this.env).replace(/^DeadlineError: /, '');
      return this.failed(spec, from, dest, why, failureExtra(started, cancelled));
    }
  }

  /**
   * A COMPLETED task's `uploads:`; the reason when a spec with `on_error: fail` failed.
   * `cancelled` fires when the task is cancelled meanwhile: what is left is not uploaded.
   */
  async forTask(task: PlannedTask, cancelled?: AbortSignal): Promise<string | undefined> {
    const specs = task.uploads ?? [];
    if (specs.length === 0) return undefined;
    const limit = this.deadline(cancelled);
    const work = this.taskSpecs(task, limit.signal, cancelled);
    this.inflight.add(work);
    try {
      return await work;
    } finally {
      this.inflight.delete(work);
      limit.dispose();
    }
  }

  private async taskSpecs(
    task: PlannedTask,
    signal: AbortSignal,
    cancelled?: AbortSignal,
  ): Promise<string | undefined> {
    const specs = task.uploads ?? [];
    let failure: string | undefined;
    for (const [i, u] of specs.entries()) {
      const spec: Spec = { task: task.name, target: u.target, onError: u.onError };
      const s = this.storage(u.target);
      if (u.renameForReplica && !this.warned.has(`${task.base}#${i}`)) {
        this.warned.add(`${task.base}#${i}`);
        this.emit({
          type: 'log',
          level: 'warning',
          message: `Task '${task.base}' is replicated: upload '${u.fromTemplate}' adds '_<replica name>' before each file's extension (e.g. ${basename(uploadKey(u, 'results.csv', task.name))}); mention \${{ task.name }} in 'to' to name the files yourself`,
        });
      }
      let files: UploadSource[] = [];
      let folder = false;
      let error: string | undefined;
      try {
        const outside: string[] = [];
        ({ files, folder } = uploadSources(u.from, task.outputDir, {
          followSymlinks: u.followSymlinks === true,
          outside,
        }));
        const named = resolve(task.outputDir, u.from);
        const skipped = outside.length
          ? ` (${outside.length} file(s) reached through a link out of ${folder ? named : fromRoot(named)} skipped: ${outside.slice(0, 3).join(', ')}${outside.length > 3 ? ', …' : ''}; follow_symlinks: true uploads them)`
          : '';
        if (files.length === 0)
          error = folder
            ? `nothing to upload: the folder ${u.from} holds no file${skipped}`
            : `nothing to upload: no file matches ${u.from}${skipped}`;
        else if (!folder && files.length > 1 && u.to !== undefined && !u.to.endsWith('/'))
          error = `${files.length} files match ${u.from} but 'to' (${u.to}) names one object; end 'to' with '/'`;
        if (skipped && !error)
          this.emit({
            type: 'log',
            level: 'warning',
            message: `${task.name}: upload from ${u.from}:${skipped}`,
          });
      } catch (e) {
        error = errorMessage(e);
      }
      if (error) {
        this.failed(spec, u.from, `s3://${s.bucket}/${joinKey(s.prefix, u.to ?? '')}`, error);
        if (u.onError === 'fail') failure ??= error;
        continue;
      }
      // a folder's files go below `to` (a folder, whether or not it ends in '/'), paths kept
      const into =
        folder && u.to !== undefined && u.to !== '' && !u.to.endsWith('/') ? { ...u, to: `${u.to}/` } : u;
      for (const f of files) {
        const key = joinKey(s.prefix, uploadKey(into, f.name, task.name));
        const err = await this.one(spec, f.path, f.path, s, key, signal, false, cancelled);
        if (err && u.onError === 'fail')
          failure ??= `upload of ${f.path} to s3://${s.bucket}/${key} failed: ${err}`;
      }
    }
    return failure;
  }

  /** `workflow.upload_all`: the run directory as one zip; the reason when it failed with `on_error: fail`. */
  async uploadAll(): Promise<string | undefined> {
    const u = this.plan.uploadAll;
    if (!u) return undefined;
    const s = this.storage(u.target);
    const key = joinKey(s.prefix, u.to);
    const spec: Spec = { target: u.target, onError: u.onError };
    const runDir = this.plan.paths.runDir;
    const limit = this.deadline();
    const signal = limit.signal;
    // next to the run directory (same filesystem, so the same room), never inside it
    mkdirSync(this.plan.paths.outputDir, { recursive: true });
    const zipPath = join(
      this.plan.paths.outputDir,
      `.${this.plan.runId}.upload-${randomBytes(4).toString('hex')}.zip`,
    );
    this.emit({ type: 'upload', phase: 'start', ...spec, from: runDir, dest: `s3://${s.bucket}/${key}` });
    try {
      try {
        await zipDirectory(runDir, zipPath, signal);
      } catch (e) {
        const err = this.failed(
          spec,
          runDir,
          `s3://${s.bucket}/${key}`,
          `zipping the run directory failed: ${describeError(e, this.env)}`,
        );
        return u.onError === 'fail' ? err : undefined;
      }
      const err = await this.one(spec, zipPath, runDir, s, key, signal, true);
      return err && u.onError === 'fail'
        ? `workflow.upload_all to s3://${s.bucket}/${key} failed: ${err}`
        : undefined;
    } finally {
      limit.dispose();
      rmSync(zipPath, { force: true });
    }
  }
}
