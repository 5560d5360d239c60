/**
 * The run-level `results.json` (config.md 5.11): one entry per concrete task with a result,
 * rewritten atomically after each task's result is collected. Writes are serialised.
 */
import { resolve, relative, sep } from 'node:path';
import { writeJsonAtomic } from './json-write.js';

export const RESULTS_SCHEMA = 'sflow.results.v1';

export interface ResultsIndexEntry {
  status: string;
  ok: boolean;
  result_file: string;
  values: Record<string, unknown>;
}

export class ResultsIndex {
  private readonly tasks: Record<string, ResultsIndexEntry> = {};
  private chain: Promise<void> = Promise.resolve();
  readonly path: string;

  constructor(
    private readonly runDir: string,
    private readonly runId: string,
  ) {
    this.path = resolve(runDir, 'results.json');
  }

  get size(): number {
    return Object.keys(this.tasks).length;
  }

  /** Adds or replaces a task's entry and rewrites the file; resolves once written. */
  add(task: string, entry: Omit<ResultsIndexEntry, 'result_file'> & { resultPath: string }): Promise<void> {
    this.tasks[task] = {
      status: entry.status,
      ok: entry.ok,
      result_file: relative(this.runDir, entry.resultPath).split(sep).join('/'),
      values: entry.values,
    };
    const doc = { schema_version: RESULTS_SCHEMA, workflow: this.runId, tasks: { ...this.tasks } };
    this.chain = this.chain.then(() => writeJsonAtomic(this.path, doc)).catch(() => undefined);
    return this.chain;
  }

  /** Waits for pending writes. */
  flush(): Promise<void> {
    return this.chain;
  }
}
