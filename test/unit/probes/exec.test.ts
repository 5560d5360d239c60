/**
 * The `exec` probe kind (src/probes/kinds/exec.ts): a command's exit status as readiness. Its
 * schema and planning (refused, located, where probes run inside a cluster), its `--dry-run`
 * text, the check on real processes (exit status, output tail, the task's environment, the
 * command never on a command line, time limit and cut-short stops that leave nothing running),
 * and one real run on the local backend where a dependent waits for the exec probe.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backendCatalog } from '../../../src/backends/registry.js';
import { SflowError } from '../../../src/config/errors.js';
import { loadRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';
import { renderDryRun } from '../../../src/plan/render.js';
import { runExecCheck } from '../../../src/probes/kinds/exec.js';
import type { ProbeTask } from '../../../src/probes/kind.js';
import { isProcessAlive } from '../../../src/util/process-liveness.js';
import { sflowInProcess } from '../../helpers/cli-inprocess.js';
import { onlyRunDir, taskTable } from '../../helpers/run-dir.js';
import { scratchDir } from '../../helpers/scratch.js';

const dir = scratchDir('sflow-exec-probe-');
let n = 0;

function write(yaml: string): string {
  const file = join(dir, `r${++n}.yaml`);
  writeFileSync(file, yaml);
  return file;
}

const LOCAL = 'backends:\n  - {name: here, type: local, default: true}\n';
const K8S =
  'backends:\n  - {name: k, type: kubernetes, default: true, namespace: default, nodes: 1}\n' +
  'operators:\n  - {name: pod, type: k8s, image: img:1}\n';
const taskWith = (probe: string, operator = '') =>
  'variables:\n  PORT: 8123\nworkflow:\n  name: w\n  tasks:\n    - name: srv\n' +
  (operator ? `      operator: ${operator}\n` : '') +
  `      script:\n        - echo hi\n      probes:\n        readiness:\n${probe}`;

function plan(yaml: string) {
  const loaded = loadRecipe({ files: [write(yaml)] });
  return {
    loaded,
    plan: buildPlan(loaded, { dryRun: true, runId: 'r', workspaceDir: dir, catalog: backendCatalog }),
  };
}

function error(f: () => unknown): SflowError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    return e as SflowError;
  }
  throw new Error('expected an error');
}

function task(env: Record<string, string> = {}): ProbeTask {
  const outputDir = join(dir, `task${++n}`);
  mkdirSync(outputDir);
  return { name: 'srv', env, outputDir };
}

const signal = () => new AbortController().signal;

describe('exec probe: schema and plan', () => {
  it('plans the command with its expressions rendered and prints it in --dry-run', () => {
    const { plan: p, loaded } = plan(
      LOCAL +
        taskWith(
          '          exec:\n            command: curl -sf http://127.0.0.1:${{ variables.PORT }}/health\n',
        ),
    );
    expect(p.tasks[0].probes.readiness[0]).toMatchObject({
      kind: 'exec',
      command: 'curl -sf http://127.0.0.1:8123/health',
    });
    expect(renderDryRun(p, loaded)).toContain(
      'probe readiness: exec "curl -sf http://127.0.0.1:8123/health" on this machine, exit 0 = met (delay=0s',
    );
  });

  it('is refused, located, on a backend whose probes run inside its cluster', () => {
    const e = error(() => plan(K8S + taskWith('          exec:\n            command: "true"\n', 'pod')));
    expect(e.code).toBe('plan.probe_where');
    expect(e.phase).toBe('plan');
    expect(e.message).toContain("exec probe of task 'srv' cannot run on backend 'k' (Kubernetes)");
    expect(e.hint).toContain('tcp_port or http_get');
    expect(e.location?.line).toBe(16); // the `exec:` key
  });

  it('needs a non-empty command and no other key', () => {
    for (const [body, says] of [
      ['{}', "'command'"],
      ['{command: ""}', 'must not be empty'],
      ['{command: "true", cmd: x}', 'cmd'],
    ]) {
      const e = error(() => plan(LOCAL + taskWith(`          exec: ${body}\n`)));
      expect(e.message + (e.details ?? []).join('\n'), body).toContain(says);
    }
  });
});

describe('exec probe: the check', () => {
  it('exit 0 is met, anything else is not; the last output line (cleaned) is the detail', async () => {
    expect(await runExecCheck('echo starting; echo up', task(), signal(), 10_000)).toEqual({
      ok: true,
      detail: 'exit 0: up',
    });
    expect(
      await runExecCheck("printf 'one\\n\\033[31mnot yet\\033[0m\\n'; exit 3", task(), signal(), 10_000),
    ).toEqual({
      ok: false,
      detail: 'exit 3: not yet',
    });
    expect(await runExecCheck('kill -9 $$', task(), signal(), 10_000)).toEqual({
      ok: false,
      detail: 'killed by SIGKILL',
    });
  });

  it("runs in the task's folder with the task's environment, the command never on a command line", async () => {
    const t = task({ SERVICE_TOKEN: 'tok-5ec7e7' });
    const r = await runExecCheck(
      'pwd > where; echo "$SERVICE_TOKEN" > env; tr "\\0" " " < /proc/$$/cmdline > cmdline',
      t,
      signal(),
      10_000,
    );
    expect(r.ok, r.detail).toBe(true);
    expect(readFileSync(join(t.outputDir, 'where'), 'utf8').trim()).toBe(t.outputDir);
    expect(readFileSync(join(t.outputDir, 'env'), 'utf8').trim()).toBe('tok-5ec7e7');
    const cmdline = readFileSync(join(t.outputDir, 'cmdline'), 'utf8');
    expect(cmdline).toContain('/bin/sh -c');
    expect(cmdline).not.toContain('SERVICE_TOKEN');
  });

  it('stops the command at its time limit, and nothing of it keeps running', async () => {
    const t = task();
    const r = await runExecCheck('echo $$ > pid; echo waiting; sleep 30', t, signal(), 300);
    expect(r).toEqual({ ok: false, detail: 'no answer within 300 ms (stopped): waiting' });
    expect(isProcessAlive(Number(readFileSync(join(t.outputDir, 'pid'), 'utf8')))).toBe(false);
  });

  it('a check cut short stops the command', async () => {
    const t = task();
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const r = await runExecCheck('echo $$ > pid; sleep 30', t, ac.signal, 10_000);
    expect(r).toEqual({ ok: false, detail: 'check cut short' });
    expect(isProcessAlive(Number(readFileSync(join(t.outputDir, 'pid'), 'utf8')))).toBe(false);
  });

  it('what the command leaves running in the background is stopped once it exits', async () => {
    const t = task();
    const r = await runExecCheck('sleep 30 & echo $! > bg; echo up', t, signal(), 10_000);
    expect(r).toEqual({ ok: true, detail: 'exit 0: up' });
    expect(isProcessAlive(Number(readFileSync(join(t.outputDir, 'bg'), 'utf8')))).toBe(false);
  });
});

describe('exec probe: a run', () => {
  it('a dependent starts once the exec readiness probe passes', { timeout: 60_000 }, async () => {
    const cwd = join(dir, `run${++n}`);
    mkdirSync(cwd);
    const file = write(
      LOCAL +
        'workflow:\n  name: w\n  tasks:\n' +
        '    - name: srv\n      script:\n        - sleep 0.5\n        - touch "$SFLOW_TASK_OUTPUT_DIR/ready"\n        - sleep 60\n' +
        '      probes:\n        readiness:\n          exec:\n            command: test -f "$SFLOW_TASK_OUTPUT_DIR/ready"\n' +
        '          interval: 0\n          timeout: 30\n' +
        '    - name: client\n      depends_on: [srv]\n      script:\n        - test -f "$SFLOW_WORKFLOW_OUTPUT_DIR/srv/ready" && echo saw-ready\n',
    );
    const r = await sflowInProcess(['run', '-f', file], { cwd });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const runDir = onlyRunDir(join(cwd, 'sflow_output'));
    expect(taskTable(runDir).client.status).toBe('COMPLETED');
    expect(readFileSync(join(runDir, 'client', 'client.log'), 'utf8')).toContain('saw-ready');
    const events = readFileSync(join(runDir, 'events.jsonl'), 'utf8');
    expect(events).toMatch(/"type":"task_ready","task":"srv"[^\n]*"probe":"exec \\"test -f/);
  });
});
