/**
 * The run-level `results.json` (config.md 5.11): one entry per concrete task with a result,
 * rewritten atomically after each task's result is collected. Writes are serialised.
 */
import { resolve, relative, sep } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { writeJsonAtomic } from './json-write.js';
import { parseJsonKeepFloats } from './json-read.js';

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

  /**
   * Entries taken over from an earlier session of the run (`sflow run --resume`: the tasks it
   * reuses); the file is rewritten with them at once, so entries of tasks that run again go.
   */
  seed(entries: Record<string, ResultsIndexEntry>): Promise<void> {
    for (const [task, e] of Object.entries(entries)) this.tasks[task] = e;
    return this.write();
  }

  /** Adds or replaces a task's entry and rewrites the file; resolves once written. */
  add(task: string, entry: Omit<ResultsIndexEntry, 'result_file'> & { resultPath: string }): Promise<void> {
    this.tasks[task] = {
      status: entry.status,
      ok: entry.ok,
      result_file: relative(this.runDir, entry.resultPath).split(sep).join('/'),
      values: entry.values,
    };
    return this.write();
  }

  private write(): Promise<void> {
    const doc = { schema_version: RESULTS_SCHEMA, workflow: this.runId, tasks: { ...this.tasks } };
    this.chain = this.chain.then(() => writeJsonAtomic(this.path, doc)).catch(() => undefined);
    return this.chain;
  }

  /** Waits for pending writes. */
  flush(): Promise<void> {
    return this.chain;
  }
}

/** The entries of an existing results.json (floats kept as written); {} when absent or unreadable. */
export function readResultsIndex(runDir: string): Record<string, ResultsIndexEntry> {
  const path = resolve(runDir, 'results.json');
  if (!existsSync(path)) return {};
  try {
    const doc = parseJsonKeepFloats(readFileSync(path, 'utf8')) as {
      tasks?: Record<string, ResultsIndexEntry>;
    };
    return doc && typeof doc.tasks === 'object' && doc.tasks !== null ? doc.tasks : {};
  } catch {
    return {};
  }
}
