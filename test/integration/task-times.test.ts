/**
 * What a local run records is what happened (issue 30): a task that sleeps 2 s and one that sleeps
 * 0.3 s have, in events.jsonl, the summary and the report, the durations and start times of their
 * processes — compared with each task's own clock (its script prints the time before and after
 * the sleep) — and the console's "completed (…)" reads the same. The built CLI, end to end.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { sflowAsync } from '../helpers/cli-async.js';
import { onlyRunDir } from '../helpers/run-dir.js';
import { scratchDir } from '../helpers/scratch.js';
import { expectTimingRun, recordedTimes, stampedRecord, timingWorkflow } from '../helpers/task-times.js';

it('a 2 s and a 0.3 s task: durations and Gantt starts as their processes ran', async () => {
  const cwd = scratchDir('sflow-times-');
  writeFileSync(join(cwd, 't.yaml'), timingWorkflow('localtimes', { stamps: true }));
  const r = await sflowAsync(['run', '-f', 't.yaml'], { cwd, timeoutMs: 120_000 });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  const run = onlyRunDir(join(cwd, 'sflow_output'));
  expectTimingRun(run, { two: stampedRecord(run, 'two'), short: stampedRecord(run, 'short') });
  // the console's duration is the recorded one (one decimal)
  const rec = recordedTimes(run);
  for (const task of ['two', 'short']) {
    const got = /completed \((\d+\.\d)s\)/.exec(r.stdout.slice(r.stdout.indexOf(`✓ ${task} completed`)))?.[1];
    const d = rec.get(task)!;
    expect(
      Math.abs(Number(got) * 1000 - (d.eventEnd! - d.eventStart!)),
      `${task}: ${r.stdout}`,
    ).toBeLessThanOrEqual(50);
  }
});
