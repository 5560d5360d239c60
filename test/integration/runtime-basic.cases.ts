/**
 * The launch, log and retry cases of a local run (a diamond, a failure, results, retries that
 * append to one log, children left behind, an empty plan), written once and run under each task
 * launcher: `runtime-basic*.test.ts` each call `runtimeBasicCases(kind)` in their own test process
 * (the launcher is chosen once per driver, from SFLOW_LAUNCHER, on the first launch).
 */
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { launcherPid, type LauncherKind } from '../../src/util/launcher/client.js';
import { executePlan } from '../../src/cli/run-execute.js';
import type { RunEvent } from '../../src/events/events.js';
import { parseEventsJsonl } from '../../src/reporters/events-jsonl.js';
import { buildPlan, type SimpleTask } from './runtime-plan.js';
import { processesWith } from '../conformance/backend.conformance.js';

let root = '';
let n = 0;

async function run(tasks: SimpleTask[], extra: { graceMs?: number } = {}) {
  const runDir = join(root, `wf-${++n}`);
  const plan = buildPlan(runDir, tasks);
  const events: RunEvent[] = [];
  const out: string[] = [];
  const r = await executePlan(plan, {
    cwd: root,
    console: true,
    out: (s) => out.push(s),
    err: (s) => out.push(s),
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return {
    r,
    runDir,
    events,
    console: out.join(''),
    read: (p: string) => readFileSync(join(runDir, p), 'utf8'),
  };
}

export function runtimeBasicCases(kind: LauncherKind): void {
  process.env.SFLOW_LAUNCHER = kind;
  root = mkdtempSync(join(tmpdir(), `sflow-rt-${kind}-`));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  describe(`executePlan on the local backend (${kind} launcher)`, () => {
    it('runs a diamond, writes logs, sflow.log, events.jsonl and the summary', async () => {
      const { r, read, console, runDir } = await run([
        {
          name: 'fetch',
          script: `printf 'the quick brown\\nfox jumps over\\nthe lazy dog\\n' > "$SFLOW_WORKFLOW_OUTPUT_DIR/corpus.txt"`,
        },
        {
          name: 'count_words',
          dependsOn: ['fetch'],
          script: `wc -w < "$SFLOW_WORKFLOW_OUTPUT_DIR/corpus.txt" | tr -d ' ' > "$SFLOW_TASK_OUTPUT_DIR/words.txt"`,
        },
        {
          name: 'count_lines',
          dependsOn: ['fetch'],
          script: `wc -l < "$SFLOW_WORKFLOW_OUTPUT_DIR/corpus.txt" | tr -d ' ' > "$SFLOW_TASK_OUTPUT_DIR/lines.txt"`,
        },
        {
          name: 'report',
          dependsOn: ['count_words', 'count_lines'],
          script: `W=$(cat "$SFLOW_WORKFLOW_OUTPUT_DIR/count_words/words.txt")\nL=$(cat "$SFLOW_WORKFLOW_OUTPUT_DIR/count_lines/lines.txt")\necho "words=$W lines=$L" | tee "$SFLOW_TASK_OUTPUT_DIR/report.txt"`,
        },
      ]);
      expect(r).toMatchObject({ status: 'COMPLETED', exitCode: 0, message: 'Workflow completed' });
      expect(read('report/report.log')).toBe('words=9 lines=3\n');
      const sflowLog = read('sflow.log');
      expect(sflowLog).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - sflow - INFO - /);
      expect(sflowLog).toContain('Submitting task: report');
      expect(sflowLog).toMatch(/Workflow execution finished in \d+:\d\d:\d\d/);
      expect(sflowLog).not.toContain('words=9');
      const events = parseEventsJsonl(read('events.jsonl'));
      expect(events[0].type).toBe('run_started');
      expect(events[events.length - 1]).toMatchObject({
        type: 'run_finished',
        status: 'COMPLETED',
        exitCode: 0,
      });
      const summary = read('sflow_summary.log');
      expect(summary).toMatch(/^Sflow Summary\n=============\nWorkflow +: wf\nStatus +: COMPLETED/);
      expect(summary).toContain('Counts   : COMPLETED=4');
      expect(summary).toContain('count_lines, count_words -> report');
      expect(summary).toContain('START -> fetch');
      expect(console).toContain('[report] words=9 lines=3');
      expect(console).toContain('✓ report completed');
      expect(console).toContain(`✓ Workflow completed\n  Output folder: ${runDir}`);
      expect(existsSync(join(runDir, 'bash_cmds.log'))).toBe(true);
    });

    it('fails a task, cancels dependents, keeps empty logs for never-started tasks', async () => {
      const { r, read, console, runDir } = await run([
        { name: 'bad', script: 'echo about to fail; exit 3' },
        { name: 'after', dependsOn: ['bad'], script: 'echo never' },
      ]);
      expect(r).toMatchObject({
        status: 'FAILED',
        exitCode: 1,
        message: "Workflow 'wf' failed: 1 task(s) failed (bad)",
      });
      expect(r.tasks).toEqual([
        ['bad', 'FAILED'],
        ['after', 'CANCELLED'],
      ]);
      expect(read('after/after.log')).toBe('');
      expect(read('sflow.log')).toContain(
        'Fail-fast: process exited with error: bad. Cancelling remaining tasks.',
      );
      const summary = read('sflow_summary.log');
      expect(summary).toContain('Failure Hints');
      expect(summary).toContain(join(runDir, 'bad', 'bad.log'));
      expect(console).toContain("✗ Workflow 'wf' failed: 1 task(s) failed (bad)");
    });

    it('parses result.json and results.json before dependents start', async () => {
      const { r, read } = await run([
        {
          name: 'bench',
          script:
            'echo "TTFT 41.5 ms"; echo "TTFT 40.5 ms"; echo "throughput 1234.5 tok/s"; echo "batch=16 model=tiny"',
          result: {
            patterns: [
              {
                name: 'ttft',
                regex: 'TTFT (?P<value>[0-9.]+) ms',
                type: 'float',
                aggregate: 'list',
                required: true,
                unit: 'ms',
              },
              {
                name: 'tps',
                regex: 'throughput ([0-9.]+)',
                type: 'auto',
                aggregate: 'last',
                required: false,
              },
              { name: 'missing', regex: 'nope (\\d+)', type: 'int', aggregate: 'last', required: false },
            ],
          },
          outputs: [
            { pattern: 'TTFT {ttft:f} ms', source: 'stdout' },
            { pattern: 'batch={batch:d} model={model}', source: 'stdout' },
          ],
        },
        {
          name: 'verify',
          dependsOn: ['bench'],
          script: 'cat "$SFLOW_WORKFLOW_OUTPUT_DIR/bench/result.json" | grep -q 1234.5',
        },
      ]);
      expect(r.status).toBe('COMPLETED');
      const doc = JSON.parse(read('bench/result.json'));
      expect(doc).toMatchObject({
        schema_version: 'sflow.result.v1',
        task: 'bench',
        status: 'COMPLETED',
        ok: true,
        values: { ttft: [41.5, 40.5], tps: 1234.5 },
      });
      expect(doc.values).not.toHaveProperty('missing');
      expect(doc.matches.ttft[0]).toEqual({ line: 1, value: 41.5, text: 'TTFT 41.5 ms' });
      const index = JSON.parse(read('results.json'));
      expect(index).toEqual({
        schema_version: 'sflow.results.v1',
        workflow: 'wf-3',
        tasks: {
          bench: { status: 'COMPLETED', ok: true, result_file: 'bench/result.json', values: doc.values },
        },
      });
      expect(read('bench/outputs.json')).toContain('"ttft": [\n      41.5,\n      40.5\n    ]');
      expect(JSON.parse(read('bench/outputs.json')).outputs).toEqual({
        ttft: [41.5, 40.5],
        batch: 16,
        model: 'tiny',
      });
    });

    it('retries append to the same log', async () => {
      const { r, read, events } = await run([
        {
          name: 'flaky',
          retries: { count: 3, intervalS: 0.05, backoff: 2 },
          script:
            'F="$SFLOW_TASK_OUTPUT_DIR/n"; N=$(( $(cat "$F" 2>/dev/null || echo 0) + 1 )); echo $N > "$F"; echo "flaky attempt $N"; test $N -ge 3',
        },
      ]);
      expect(r.status).toBe('COMPLETED');
      expect(read('flaky/flaky.log')).toBe('flaky attempt 1\nflaky attempt 2\nflaky attempt 3\n');
      expect(events.filter((e) => e.type === 'task_retry')).toHaveLength(2);
      expect(read('sflow.log')).toContain(
        "Task 'flaky' failed with exit code 1; retrying in 0.05s (attempt 2/4)",
      );
    });

    it('background children a completed task left behind are stopped at the end of the run', async () => {
      const m = `${process.pid}${Math.floor(Math.random() * 1e6)}`;
      const { r, events, read } = await run([
        { name: 'daemonizer', script: `sleep 4${m} >/dev/null 2>&1 &\necho spawned` },
        {
          name: 'user',
          dependsOn: ['daemonizer'],
          script: `pgrep -f "sleep 4${m}" >/dev/null && echo still-there`,
        },
      ]);
      expect(r.status).toBe('COMPLETED');
      expect(read('user/user.log')).toBe('still-there\n'); // alive while the run went on
      expect(processesWith(`4${m}`)).toEqual([]);
      expect(
        events.some((e) => e.type === 'task_stopped' && e.task === 'daemonizer' && e.why === 'teardown'),
      ).toBe(true);
    });

    it(`the tasks above were started by the ${kind} launcher`, () => {
      const pid = launcherPid();
      if (kind === 'inline') expect(pid).toBeUndefined();
      else {
        expect(pid).toBeGreaterThan(0);
        const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
        expect(argv0).toBe(kind === 'perl' ? 'perl' : process.execPath);
      }
    });

    it('an empty plan completes at once', async () => {
      const { r, read } = await run([]);
      expect(r).toMatchObject({ status: 'COMPLETED', exitCode: 0 });
      expect(read('sflow_summary.log')).toContain('Tasks    : 0');
    });
  });
}
