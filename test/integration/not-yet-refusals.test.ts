/**
 * No silent no-ops (issue 8): a recipe or command line using each feature of src/plan/not-yet.ts
 * is refused by a real run before anything is allocated (located, naming the feature, exit 1,
 * no run folder) or warned about loudly, while `--dry-run` still prints the plan and says what a
 * real run would refuse. Also: --enable-task-monitor names, SFLOW_TASK_OUTPUT, -v, and the
 * enforced workflow.timeout. In-process through the CLI's entry.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NOT_YET } from '../../src/plan/not-yet.js';
import { hasStackTrace } from '../helpers/cli.js';
import { sflowInProcess as cli } from '../helpers/cli-inprocess.js';
import { onlyRunDir, taskTable } from '../helpers/run-dir.js';

const root = mkdtempSync(join(tmpdir(), 'sflow-not-yet-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
function workdir(recipe: string): string {
  const d = join(root, String(++n));
  mkdirSync(d);
  writeFileSync(join(d, 'r.yaml'), recipe);
  return d;
}

const TASK = '    - name: a\n      script: [echo hi]\n';
const wf = (extra = '', task = TASK) => `workflow:\n  name: w\n${extra}  tasks:\n${task}`;

interface Case {
  recipe: string;
  args?: string[];
  /** 1-based line of the recipe the refusal points at (absent: a flag) */
  line?: number;
  /** text the message contains */
  says: string;
  /** a real run needs an engine this suite does not start (its warning is checked by the engine suite) */
  dryOnly?: boolean;
}

/** One use of every row of the table: a new row needs a case here. */
const CASES: Record<string, Case> = {
  'local-node-filters': {
    recipe: 'backends:\n  - name: l\n    type: local\n    default: true\n    include_nodes: [h]\n' + wf(),
    line: 5,
    says: "backend 'l' include_nodes: this backend is this one machine",
  },
  'docker-log-offload': {
    recipe:
      'backends:\n  - name: d\n    type: docker\n    image: x\n    default: true\n    offload_task_logs: true\n    hosts: [{name: h, address: h}]\n' +
      wf(),
    line: 6,
    says: "task 'a' offload_task_logs (a pool host does not mount the run directory): the container's output streams through its attached client",
    dryOnly: true,
  },
  'k8s-mpi-operator-route': {
    recipe:
      'operators:\n  - name: mpi\n    type: k8s_mpi\n    image: x\n    host_network: false\nbackends:\n  - name: k\n    type: kubernetes\n    namespace: n\n    nodes: 1\n    default: true\n' +
      wf('', `    - name: a\n      script: [mpirun -np 1 hostname]\n      operator: mpi\n`),
    line: 5,
    says: "operator 'mpi' (k8s_mpi) host_network: this version's k8s_mpi (pods and MPIJob routes alike)",
  },
  'k8s-mpi-mpijob-fields': {
    recipe:
      'operators:\n  - name: mpi\n    type: k8s_mpi\n    image: x\n    mpi:\n      route: pods\n      launcher_creation_policy: AtStartup\nbackends:\n  - name: k\n    type: kubernetes\n    namespace: n\n    nodes: 1\n    default: true\n' +
      wf('', `    - name: a\n      script: [mpirun -np 1 hostname]\n      operator: mpi\n`),
    line: 7,
    says: "operator 'mpi' mpi.launcher_creation_policy: these settings belong to the MPIJob route",
    dryOnly: true,
  },
  'task-timeout': {
    recipe: wf('', `${TASK}      timeout: 5\n`),
    line: 6,
    says: "workflow.tasks[0].timeout: a task's timeout is not enforced",
  },
  'task-variables': {
    recipe: wf('', `${TASK}      variables: {X: 1}\n`),
    line: 6,
    says: 'workflow.tasks[0].variables: task-level variables are accepted and ignored',
  },
  'task-ports': {
    recipe: wf('', `${TASK}      ports: [{port: 8000}]\n`),
    line: 6,
    says: 'workflow.tasks[0].ports: advertised ports are metadata only',
  },
};

describe('every not-yet feature, used in a recipe or on the command line', () => {
  it('has a case here', () => {
    expect(Object.keys(CASES).sort()).toEqual(NOT_YET.map((r) => r.id).sort());
  });

  it.each(NOT_YET.map((r) => [r.id, r] as const))('%s', async (id, row) => {
    const c = CASES[id];
    const cwd = workdir(c.recipe);
    const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const at = c.line ? `r\\.yaml:${c.line}:\\d+: ` : '';
    const finding = new RegExp(`⚠ ${at}${esc(c.says)}`);
    const dry = await cli(['run', '-f', 'r.yaml', '--dry-run', ...(c.args ?? [])], { cwd });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('Dry-run complete: w');
    const listed = dry.stdout.slice(dry.stdout.indexOf('\nWarnings:\n'));
    expect(listed).toMatch(finding);
    if (c.dryOnly) return;
    const run = await cli(['run', '-f', 'r.yaml', ...(c.args ?? [])], { cwd });
    expect(hasStackTrace(run.stderr)).toBe(false);
    if (row.action === 'refuse') {
      expect(listed).toMatch(/ — a real run refuses this\n/);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`^✗ Not supported in this version: ${at}`));
      expect(run.stderr).toContain(c.says);
      expect(run.stderr).not.toContain('Configuration error');
      expect(existsSync(join(cwd, 'sflow_output')), 'nothing allocated or created').toBe(false);
    } else {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(finding);
      expect(taskTable(onlyRunDir(join(cwd, 'sflow_output'))).a.status).toBe('COMPLETED');
    }
  });

  it('several at once are refused together, each located, before anything starts', async () => {
    const mpi = (name: string) =>
      `  - name: ${name}\n    type: k8s_mpi\n    image: x\n    host_network: false\n`;
    const task = (name: string, op: string) =>
      `    - name: ${name}\n      script: [mpirun -np 1 hostname]\n      operator: ${op}\n`;
    const cwd = workdir(
      `operators:\n${mpi('m1')}${mpi('m2')}` +
        'backends:\n  - name: k\n    type: kubernetes\n    namespace: n\n    nodes: 1\n    default: true\n' +
        wf('', task('a', 'm1') + task('b', 'm2')),
    );
    const r = await cli(['run', '-f', 'r.yaml'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^✗ Not supported in this version: r\.yaml:5:5: this recipe uses 2 things this version plans but does not run yet; nothing was started:\n/,
    );
    expect(r.stderr).toMatch(/\n {2}- r\.yaml:5:5: operator 'm1' \(k8s_mpi\) host_network: /);
    expect(r.stderr).toMatch(/\n {2}- r\.yaml:9:5: operator 'm2' \(k8s_mpi\) host_network: /);
    expect(existsSync(join(cwd, 'sflow_output'))).toBe(false);
  });
});

describe('command-line checks', () => {
  it('--enable-task-monitor with an unknown task is a usage error naming the known tasks', async () => {
    const cwd = workdir(wf('', `${TASK}    - name: bench\n      script: [echo]\n`));
    for (const extra of [['--dry-run'], []]) {
      const r = await cli(['run', '-f', 'r.yaml', '--enable-task-monitor', 'a,bnech', ...extra], { cwd });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        "✗ Usage error: --enable-task-monitor: unknown task 'bnech' (did you mean 'bench'?)\n  hint: known tasks: a, bench\n",
      );
    }
  });

  it('an unknown SFLOW_TASK_OUTPUT is refused by a run and flagged by a dry-run', async () => {
    const cwd = workdir(wf());
    const env = { SFLOW_TASK_OUTPUT: 'sometimes' };
    const run = await cli(['run', '-f', 'r.yaml'], { cwd, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "✗ Usage error: SFLOW_TASK_OUTPUT='sometimes' is not one of auto, always, never, 1, 0",
    );
    expect(existsSync(join(cwd, 'sflow_output'))).toBe(false);
    const dry = await cli(['run', '-f', 'r.yaml', '--dry-run'], { cwd, env });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(
      "⚠ SFLOW_TASK_OUTPUT='sometimes' is not one of auto, always, never, 1, 0: a real run refuses it",
    );
  });

  it('-v writes debug lines to sflow.log', async () => {
    const cwd = workdir(wf());
    const r = await cli(['run', '-f', 'r.yaml', '-v'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const log = readFileSync(join(onlyRunDir(join(cwd, 'sflow_output')), 'sflow.log'), 'utf8');
    expect(log).toMatch(/ - DEBUG - /);
  });
});

describe('workflow.timeout', () => {
  it('stops the run when it passes: tasks cancelled, exit 1, the verdict and summary say why', async () => {
    const cwd = workdir(
      wf(
        '  timeout: 1\n',
        '    - name: slow\n      script: [sleep 60]\n    - name: after\n      depends_on: [slow]\n      script: [echo never]\n',
      ),
    );
    const r = await cli(['run', '-f', 'r.yaml'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      '⚠ workflow.timeout (1s) reached: stopping every task that is still running or waiting',
    );
    expect(r.stderr).toContain(
      "✗ Workflow 'w' stopped: workflow.timeout (1s) reached; 2 task(s) cancelled (slow, after)",
    );
    const runDir = onlyRunDir(join(cwd, 'sflow_output'));
    const t = taskTable(runDir);
    expect([t.slow.status, t.after.status]).toEqual(['CANCELLED', 'CANCELLED']);
    const summary = readFileSync(join(runDir, 'sflow_summary.log'), 'utf8');
    expect(summary).toMatch(/Status +: FAILED/);
    expect(summary).toContain('workflow.timeout (1s) reached');
  });

  it('is shown by the dry-run, and a value that is not a duration is a located error', async () => {
    const ok = await cli(['run', '-f', 'r.yaml', '--dry-run'], { cwd: workdir(wf("  timeout: '1h30m'\n")) });
    expect(ok.stdout).toContain('workflow timeout: 1h30m (the run is stopped when it passes)');
    const bad = await cli(['run', '-f', 'r.yaml', '--dry-run'], { cwd: workdir(wf('  timeout: soon\n')) });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /^✗ Configuration error: r\.yaml:3:12: workflow\.timeout must be a duration, got 'soon'/,
    );
  });

  it('a run that finishes in time is not affected', async () => {
    const cwd = workdir(wf('  timeout: 2h\n'));
    const r = await cli(['run', '-f', 'r.yaml'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('timeout');
  });
});
