/**
 * Where each backend's task times come from, piece by piece (the engine suites check them end to
 * end): Docker's State.StartedAt/FinishedAt folded over an attempt's containers; the Slurm step's
 * own stamps, written by the step script's first line and its EXIT trap and read back per
 * attempt; a Kubernetes container's whole-second times narrowed by the moment the watch showed
 * the change; a merged pod member's start and exit markers with its own clock.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineTime } from '../../src/backends/container-engine.js';
import { taskStatus, type MemberState } from '../../src/backends/docker/members.js';
import { Demux, supervisorScript } from '../../src/backends/kubernetes/merged-script.js';
import { podState, refineTime } from '../../src/backends/kubernetes/pod-status.js';
import { readStepTimes, stepStamp } from '../../src/backends/slurm/step-stamp.js';
import { STEP_STAMP_FILE, stepStampLine } from '../../src/operators/srun-step.js';
import { stampMs } from '../../src/util/stamp-time.js';
import { scratchDir } from '../helpers/scratch.js';

describe('Docker', () => {
  it("engine timestamps: nanoseconds to ms; Go's zero time is no time", () => {
    expect(engineTime('2026-12-02T16:45:49.123456789Z')).toBe(Date.UTC(2026, 11, 2, 16, 45, 49, 123));
    expect(engineTime('0001-01-01T00:00:00Z')).toBeUndefined();
    expect(engineTime('')).toBeUndefined();
  });

  it('an attempt starts with its first container and ends with the one that decided it', () => {
    const ran = (startedAt: number, finishedAt: number, code = 0): MemberState => ({
      state: 'EXITED',
      code,
      startedAt,
      finishedAt,
    });
    expect(taskStatus([ran(100, 900), ran(50, 1000)], false)).toMatchObject({ startedAt: 50, endedAt: 1000 });
    // a failed member decides the attempt: its end is the attempt's
    expect(taskStatus([ran(100, 900), ran(50, 400, 3)], false)).toMatchObject({
      exit: { code: 3 },
      startedAt: 50,
      endedAt: 400,
    });
    expect(taskStatus([{ state: 'RUNNING', startedAt: 70 }, { state: 'SUBMITTED' }], false)).toEqual({
      state: 'RUNNING',
      startedAt: 70,
    });
    expect(taskStatus([{ state: 'SUBMITTED' }], false)).toEqual({ state: 'SUBMITTED' });
  });
});

describe('Slurm step stamps', () => {
  it('clock text: bash 5 microseconds, a comma locale, date without %N; anything else is no time', () => {
    expect(stampMs('1796230129.548771')).toBe(1796230129549);
    expect(stampMs('1796230129,5')).toBe(1796230129500);
    expect(stampMs('1796230129.%N')).toBe(1796230129000);
    expect(stampMs('17962')).toBeUndefined();
    expect(stampMs('x')).toBeUndefined();
  });

  it("the step's first line stamps its start and its EXIT trap its end, in the task folder, also when the script fails", () => {
    const dir = scratchDir('sflow-stamp-');
    const before = Date.now();
    const r = spawnSync('bash', ['-c', `${stepStampLine(dir)}\nset -e\nsleep 0.2\nfalse\necho never`], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stdout + r.stderr).toBe(''); // nothing of it reaches the task's output
    const t = readStepTimes({ path: join(dir, STEP_STAMP_FILE), offset: 0 });
    expect(t.start).toBeGreaterThanOrEqual(before - 10);
    expect(t.end! - t.start!).toBeGreaterThanOrEqual(190);
    expect(t.end).toBeLessThanOrEqual(Date.now() + 10);
  });

  it('a folder the step cannot write: no error, no output, the script runs', () => {
    const r = spawnSync('bash', ['-c', `${stepStampLine('/nonexistent/dir')}\necho ran`], {
      encoding: 'utf8',
    });
    expect([r.status, r.stdout, r.stderr]).toEqual([0, 'ran\n', '']);
  });

  it("an attempt reads only its own lines; a line still being written is not read; no 'e': no end", () => {
    const dir = scratchDir('sflow-stamp-');
    const path = join(dir, STEP_STAMP_FILE);
    writeFileSync(path, 's 1796230100.000000\ne 1796230101.000000\n'); // attempt 1
    const second = stepStamp(dir);
    expect(second.offset).toBe(readFileSync(path).length);
    appendFileSync(path, 's 1796230200.250000\ns 1796230200.100000\ne 17962302');
    expect(readStepTimes(second)).toEqual({ start: 1796230200100 });
    appendFileSync(path, '05.000000\n');
    expect(readStepTimes(second)).toEqual({ start: 1796230200100, end: 1796230205000 });
    expect(readStepTimes(stepStamp(join(dir, 'missing')))).toEqual({});
  });
});

describe('Kubernetes', () => {
  it('whole-second container times narrowed by the watch, else the middle of the second', () => {
    const S = 1_796_230_129_000;
    expect(refineTime(S, S + 420)).toBe(S + 420);
    expect(refineTime(S, S + 2_000)).toBe(S + 500); // seen late: the second is all we know
    expect(refineTime(S, S - 100)).toBe(S + 500);
    expect(refineTime(S + 123, S + 900)).toBe(S + 123); // a time with a fraction is taken as it is
    expect(refineTime(undefined, S)).toBeUndefined();
  });

  it("pod status: the main container's startedAt / finishedAt", () => {
    const st = podState({
      status: {
        phase: 'Succeeded',
        containerStatuses: [
          {
            name: 'main',
            state: {
              terminated: {
                exitCode: 0,
                startedAt: new Date('2026-12-02T16:45:49Z'),
                finishedAt: '2026-12-02T16:45:51Z' as unknown as Date,
              },
            },
          } as never,
        ],
      },
    });
    expect([st.startedAt, st.finishedAt]).toEqual([
      Date.UTC(2026, 11, 2, 16, 45, 49),
      Date.UTC(2026, 11, 2, 16, 45, 51),
    ]);
  });

  it('merged pod members announce start and exit with their own clock (the real supervisor, in bash)', () => {
    const dir = scratchDir('sflow-merge-');
    // the supervisor's paths, moved into a scratch folder
    const script = supervisorScript(1, [0])
      .replace(/\/sflow-merge/g, join(dir, 'm'))
      .replace(/\/sflow\/env\/m\$i\.env/g, join(dir, 'm0.env'))
      .replace(/\/sflow\/run\/m\$i\.sh/g, join(dir, 'm0.sh'));
    writeFileSync(join(dir, 'm0.env'), `SFLOW_TASK_OUTPUT_DIR='${dir}/out'\n`);
    writeFileSync(join(dir, 'm0.sh'), 'sleep 0.3; exit 4\n');
    const before = Date.now();
    const r = spawnSync('bash', ['-c', script], { timeout: 20_000 });
    const pieces = new Demux().push(r.stdout);
    const start = pieces.find((p) => p.kind === 'start');
    const exit = pieces.find((p) => p.kind === 'exit');
    const startMs = stampMs(start!.data.toString());
    const [code, at] = exit!.data.toString().trim().split(/\s+/);
    expect(code).toBe('4');
    expect(startMs).toBeGreaterThanOrEqual(before - 10);
    expect(stampMs(at)! - startMs!).toBeGreaterThanOrEqual(290);
  });
});
