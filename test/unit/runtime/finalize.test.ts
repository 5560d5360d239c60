/**
 * The one way a task that exited 0 still fails: finalize returns `{kind, reason}` — `assertion`
 * for a failed `assert:` (the task then uploads nothing), `upload` for an upload with
 * `on_error: fail` — and nothing when the task completes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backendCatalog } from '../../../src/backends/registry.js';
import { loadRecipe } from '../../../src/config/load.js';
import type { RunEventInput } from '../../../src/events/events.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { PlannedTask } from '../../../src/plan/types.js';
import { makeFinalizer, type RunUploads } from '../../../src/runtime/finalize.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-finalize-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RECIPE = `version: "0.1"
storage:
  - {name: b, type: s3, bucket: x}
workflow:
  name: w
  tasks:
  - name: t
    script: [echo hi]
    result:
      tput: 'tput: ([\\d.]+)'
    assert:
      - "\${{ result.tput > 5 }}"
    uploads:
      - {target: b, from: out.txt, on_error: fail}
`;

function task(): PlannedTask {
  const f = join(dir, 'r.yaml');
  writeFileSync(f, RECIPE);
  const plan = buildPlan(loadRecipe({ files: [f] }), {
    dryRun: false,
    runId: 'run1',
    workspaceDir: dir,
    outputDir: join(dir, 'out'),
    catalog: backendCatalog,
  });
  const t = plan.tasks[0];
  mkdirSync(t.outputDir, { recursive: true });
  return t;
}

function fakeUploads(answer: string | undefined): RunUploads & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    forTask: (t) => {
      calls.push(t.name);
      return Promise.resolve(answer);
    },
    uploadAll: () => Promise.resolve(undefined),
    abort: () => undefined,
    close: () => Promise.resolve(),
  };
}

async function finalizeWith(log: string, uploads: RunUploads) {
  const t = task();
  writeFileSync(t.logPath, log);
  const events: RunEventInput[] = [];
  const f = makeFinalizer(
    join(dir, 'out', 'run1'),
    'run1',
    (e) => events.push(e),
    () => uploads,
  );
  const outcome = await f.finalize(t);
  await f.flush();
  return { outcome, events };
}

describe('finalize: one failure mechanism, a kind and a reason', () => {
  it('a failed assertion fails the task (kind assertion) and uploads nothing', async () => {
    const up = fakeUploads(undefined);
    const { outcome, events } = await finalizeWith('tput: 3\n', up);
    expect(outcome?.kind).toBe('assertion');
    expect(outcome?.reason).toContain('tput > 5');
    expect(up.calls).toEqual([]);
    expect(events.some((e) => e.type === 'result_parsed')).toBe(true);
  });

  it('an upload with on_error: fail that failed fails the task (kind upload) with its reason', async () => {
    const up = fakeUploads('upload of out.txt failed: NoSuchBucket');
    const { outcome } = await finalizeWith('tput: 9\n', up);
    expect(outcome).toEqual({ kind: 'upload', reason: 'upload of out.txt failed: NoSuchBucket' });
    expect(up.calls).toEqual(['t']);
  });

  it('assertions that hold and uploads that succeed: the task completes', async () => {
    const up = fakeUploads(undefined);
    const { outcome } = await finalizeWith('tput: 9\n', up);
    expect(outcome).toBeUndefined();
    expect(up.calls).toEqual(['t']);
  });
});
