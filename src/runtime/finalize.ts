/**
 * After a task exits 0, before COMPLETED: its result (result.json, results.json index), its
 * `assert:` expressions, legacy `outputs` and then its `uploads:`. One mechanism fails a task
 * here: `finalize` returns the kind and the reason — a failed assertion (`assertion`; the task
 * uploads nothing then, as a FAILED task never does) or an upload with `on_error: fail`
 * (`upload`).
 */
import { assertionFailure, checkAssertions } from '../outputs/assertions.js';
import { collectTaskResult } from '../outputs/results.js';
import { ResultsIndex, type ResultsIndexEntry } from '../outputs/results-index.js';
import { writeLegacyOutputs } from '../outputs/legacy-outputs.js';
import type { Plan, PlannedTask } from '../plan/types.js';
import type { RunEventInput } from '../events/events.js';
import type { FinalizeFailure } from './task-state.js';

/**
 * What a run needs from an uploader (the CLI hands in the S3 one, src/uploads/): each returns the
 * reason when an upload with `on_error: fail` failed; every outcome is reported as events.
 */
export interface RunUploads {
  /** a COMPLETED task's `uploads:`; `cancelled`: the task was cancelled meanwhile (they stop) */
  forTask(task: PlannedTask, cancelled?: AbortSignal): Promise<string | undefined>;
  /** `workflow.upload_all`, after the run */
  uploadAll(): Promise<string | undefined>;
  /** stops uploads in flight (Ctrl-C) */
  abort(): void;
  /** waits (bounded) for uploads still settling, closes the clients */
  close(): Promise<void>;
}

/** Creates the uploader of a run once its final plan is known. */
export type RunUploadsFactory = (plan: Plan, emit: (e: RunEventInput) => void) => RunUploads;

export function makeFinalizer(
  runDir: string,
  runId: string,
  emit: (e: RunEventInput) => void,
  uploads?: () => RunUploads | undefined,
) {
  const index = new ResultsIndex(runDir, runId);
  return {
    async finalize(task: PlannedTask, cancelled?: AbortSignal): Promise<FinalizeFailure | undefined> {
      let failure: string | undefined;
      if (task.result) {
        const r = await collectTaskResult(task, task.result);
        const assertions = task.asserts?.length ? checkAssertions(task.asserts, r.doc.values) : undefined;
        failure = assertions && assertionFailure(assertions, r.path);
        emit({
          type: 'result_parsed',
          task: task.name,
          ok: r.doc.ok,
          values: r.values,
          errors: r.doc.errors,
          ...(r.path ? { resultPath: r.path } : {}),
          ...(assertions ? { assertions } : {}),
        });
        if (r.path)
          await index.add(task.name, {
            status: failure ? 'FAILED' : 'COMPLETED',
            ok: r.doc.ok && !failure,
            values: r.doc.values,
            resultPath: r.path,
          });
      }
      if (task.outputs && task.outputs.length > 0) {
        const o = await writeLegacyOutputs(task);
        if (o.warning) emit({ type: 'log', level: 'warning', message: o.warning });
      }
      if (failure) return { kind: 'assertion', reason: failure };
      const uploader = task.uploads?.length ? uploads?.() : undefined;
      const upload = uploader ? await uploader.forTask(task, cancelled) : undefined;
      return upload ? { kind: 'upload', reason: upload } : undefined;
    },
    /** a resumed run: the results.json entries of the tasks it reuses stay in the file */
    seed: (entries: Record<string, ResultsIndexEntry>) => index.seed(entries),
    flush: () => index.flush(),
  };
}
