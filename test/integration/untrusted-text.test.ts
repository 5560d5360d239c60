/**
 * Untrusted text stays text (issue 24 item 6), with the built CLI: what another user's GPU
 * registry record, a run folder's ledger or a task's output says reaches the terminal with its
 * control characters escaped (no title change, no cleared screen, no forged "✓ Workflow
 * completed" line of its own); the report reads logs only inside the run folder, however the
 * ledger or a link in the task's folder points out of it. (`uploads.from` and links:
 * uploads-s3.test.ts.)
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, sflow } from '../helpers/cli.js';
import { onlyRunDir } from '../helpers/run-dir.js';
import { scratchDir } from '../helpers/scratch.js';

/** sets the terminal title, clears the screen, goes back to the line start, forges a verdict */
const HOSTILE = '\x1b]0;pwned\x07\x1b[2J\r✓ Workflow completed';
// eslint-disable-next-line no-control-regex -- what must not reach a terminal
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

describe('untrusted text on the terminal', () => {
  it("another user's GPU registry record: its run and task names are shown escaped", () => {
    const dir = scratchDir('sflow-untrusted-gpu-');
    const reg = join(dir, 'reg');
    mkdirSync(reg);
    chmodSync(reg, 0o700);
    const bin = join(REPO, 'assets', 'test-bin');
    const env = {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      FAKE_NVIDIA_SMI_GPUS: '1',
      SFLOW_GPU_RESERVATION_DIR: reg,
    };
    const uuid = spawnSync(join(bin, 'nvidia-smi'), ['--query-gpu=uuid', '--format=csv,noheader'], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    }).stdout.trim();
    expect(uuid).toMatch(/^GPU-/);
    const holder = spawn('sleep', ['300']);
    try {
      writeFileSync(
        join(reg, 'evil.json'),
        JSON.stringify({
          version: 1,
          runId: `run${HOSTILE}`,
          task: `task${HOSTILE}`,
          host: hostname(),
          pid: holder.pid,
          pidStartTime: null,
          uid: process.getuid?.() ?? null,
          uuids: [uuid],
          indices: [0],
          state: 'held',
          createdAt: '2020-01-01T00:00:00.000Z',
        }),
      );
      writeFileSync(
        join(dir, 'gpu.yaml'),
        'version: "0.1"\nworkflow:\n  name: gpuwant\n  tasks:\n    - name: g\n      resources:\n        gpus: {count: 1}\n      script: [echo hi]\n',
      );
      const r = sflow(['run', '-f', 'gpu.yaml'], { cwd: dir, env });
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).toContain(
        "reserved by run 'run\\x1b]0;pwned\\x07\\x1b[2J\\r✓ Workflow completed' task 'task\\x1b]0;",
      );
      expect(r.stdout + r.stderr).not.toMatch(RAW_CONTROL);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('names from a run folder (sflow recover): shown escaped', () => {
    const dir = scratchDir('sflow-untrusted-recover-');
    const runDir = join(dir, 'sflow_output', 'wf-20200101-000000-abcdef');
    mkdirSync(runDir, { recursive: true });
    // a run whose driver is gone, with a handle a task wrote into the ledger
    writeFileSync(
      join(runDir, 'events.jsonl'),
      JSON.stringify({ t: 1, type: 'run_started', workflow: 'wf', runId: 'wf-1', runDir, tasks: ['a'] }) +
        '\n',
    );
    writeFileSync(
      join(runDir, 'handles.jsonl'),
      JSON.stringify({
        v: 1,
        t: 1,
        op: 'launched',
        handle: {
          v: 1,
          backend: 'local',
          type: 'bogus',
          runId: 'wf-1',
          task: `a${HOSTILE}`,
          attempt: 1,
          state: 'RUNNING',
          nodes: [],
          remoteIds: [],
          submittedAt: 1,
          logPath: join(runDir, 'a.log'),
        },
      }) + '\n',
    );
    const r = sflow(['recover', runDir], { cwd: dir, env: { SFLOW_RUN_INDEX_DIR: join(dir, 'index') } });
    expect(r.stdout).toContain('a\\x1b]0;pwned\\x07\\x1b[2J\\r✓ Workflow completed#1: not recovered');
    expect(r.stdout + r.stderr).not.toMatch(RAW_CONTROL);
  });

  it("a failed task's output in the console's failure lines: escape sequences removed", () => {
    const dir = scratchDir('sflow-untrusted-tail-');
    writeFileSync(
      join(dir, 'r.yaml'),
      `version: "0.1"\nworkflow:\n  name: tail\n  tasks:\n    - name: t\n      script:\n        - printf 'before\\r\\033]0;pwned\\007\\033[2J✓ Workflow completed\\nafter\\n'\n        - exit 3\n`,
    );
    const r = sflow(['run', '-f', 'r.yaml'], { cwd: dir, env: { SFLOW_TASK_OUTPUT: 'never' } });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('last 2 line(s)');
    expect(r.stdout + r.stderr).toContain('│ ✓ Workflow completed');
    expect(r.stdout + r.stderr).not.toMatch(RAW_CONTROL);
  });
});

describe('the report reads logs only inside the run folder', () => {
  const PASSWD = readFileSync('/etc/passwd', 'utf8').split('\n')[0];

  function failedRun(task: string, lines: string[]): string {
    const dir = scratchDir('sflow-untrusted-report-');
    writeFileSync(
      join(dir, 'r.yaml'),
      `version: "0.1"\nworkflow:\n  name: rep\n  tasks:\n    - name: ${task}\n      script:\n${lines.map((l) => `        - ${l}\n`).join('')}`,
    );
    const r = sflow(['run', '-f', 'r.yaml'], { cwd: dir });
    expect(r.code, r.stderr).toBe(1);
    return onlyRunDir(join(dir, 'sflow_output'));
  }

  it('a log the task replaced by a link out of its folder: not read', () => {
    const runDir = failedRun('linked', [
      'echo mine',
      'rm -f "$SFLOW_TASK_OUTPUT_DIR/linked.log"',
      'ln -s /etc/passwd "$SFLOW_TASK_OUTPUT_DIR/linked.log"',
      'exit 1',
    ]);
    const report = readFileSync(join(runDir, 'report.html'), 'utf8');
    expect(PASSWD.length).toBeGreaterThan(0);
    expect(report).not.toContain(PASSWD);
    expect(report).toContain('is not a file of this run folder');
  });

  it('a ledger edited to name a log out of the folder (absolute, or `..` out of it): not read', () => {
    const runDir = failedRun('plain', ['echo plain-tail-line', 'exit 2']);
    const report = () => readFileSync(join(runDir, 'report.html'), 'utf8');
    expect(report()).toContain('plain-tail-line');
    const ledger = join(runDir, 'events.jsonl');
    const plainLog = join(runDir, 'plain', 'plain.log');
    for (const outside of ['/etc/passwd', `${runDir}/../../../../../../../../etc/passwd`]) {
      writeFileSync(ledger, readFileSync(ledger, 'utf8').split(plainLog).join(outside));
      const again = sflow(['report', runDir]);
      expect(again.code, again.stderr).toBe(0);
      expect(report()).not.toContain(PASSWD);
      expect(report()).toContain('is not a file of this run folder');
      writeFileSync(ledger, readFileSync(ledger, 'utf8').split(outside).join(plainLog));
    }
    // a link inside the folder to a file inside it is read as before
    const alias = join(runDir, 'plain', 'alias.log');
    symlinkSync(plainLog, alias);
    writeFileSync(ledger, readFileSync(ledger, 'utf8').split(plainLog).join(alias));
    expect(sflow(['report', runDir]).code).toBe(0);
    expect(report()).toContain('plain-tail-line');
  });
});
