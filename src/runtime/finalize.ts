/**
 * After a task exits 0, before COMPLETED: its result (result.json, results.json index), its
 * `assert:` expressions and legacy `outputs`. A failed assertion is returned as the reason the
 * task fails.
 */
import { assertionFailure, checkAssertions } from '../outputs/assertions.js';
import { collectTaskResult } from '../outputs/results.js';
import { ResultsIndex, type ResultsIndexEntry } from '../outputs/results-index.js';
import { writeLegacyOutputs } from '../outputs/legacy-outputs.js';
import type { PlannedTask } from '../plan/types.js';
import type { RunEventInput } from '../events/events.js';

export function makeFinalizer(runDir: string, runId: string, emit: (e: RunEventInput) => void) {
  const index = new ResultsIndex(runDir, runId);
  return {
    async finalize(task: PlannedTask): Promise<string | undefined> {
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
      return failure;
    },
    /** a resumed run: the results.json entries of the tasks it reuses stay in the file */
    seed: (entries: Record<string, ResultsIndexEntry>) => index.seed(entries),
    flush: () => index.flush(),
  };
}
