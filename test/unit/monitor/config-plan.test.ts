/** monitor.md §11 items 1–4, 7, 8, 10, 11: validation, defaults, folders, CLI flags; §2 resources.nodes/gpus. */
import { describe, expect, it } from 'vitest';
import { SflowError, formatLocation } from '../../../src/config/errors.js';
import { parseTaskMonitorFlag } from '../../../src/config/monitor-flags.js';
import { normalizeMonitor } from '../../../src/plan/monitor-config.js';
import { monitorSchedule } from '../../../src/plan/monitor-schedule.js';
import { renderMonitorPlan } from '../../../src/plan/monitor-plan.js';
import type { PlannedTask } from '../../../src/plan/types.js';
import { plannedTask } from '../../helpers/planned-task.js';
import { plannedBackend } from '../../helpers/backends.js';
import { kubernetesKind } from '../../../src/backends/kubernetes/kind.js';
import { paths, planOf } from './helpers.js';

const wf = (tasks: string, top = '') => `version: "0.1"\n${top}workflow:\n  name: wf\n${tasks}`;
const oneTask = (monitor: string) =>
  wf(`  tasks:\n    - name: a\n      script: ["true"]\n      monitor:\n${monitor}`);

function loadError(yaml: string): SflowError {
  try {
    planOf(yaml);
  } catch (e) {
    return e as SflowError;
  }
  throw new Error('expected a validation error');
}

describe('§11.1–3 validation', () => {
  it('interval 99 (monitor or scope) is rejected with file:line:col; 100 is accepted', () => {
    const e1 = loadError(oneTask('        interval: 99\n'));
    expect(e1.message).toMatch(/monitor\.interval: must be >= 100, got 99/);
    expect(formatLocation(e1.location)).toMatch(/r\.yaml:8:\d+$/);
    const e2 = loadError(oneTask('        scopes: { cpu: { interval: 99 } }\n'));
    expect(e2.message).toMatch(/must be >= 100, got 99/);
    const ok = planOf(oneTask('        interval: 100\n        scopes: { cpu: { interval: 100 } }\n'));
    expect(ok.schedule.collectors[0].scopes).toEqual({ cpu: 100 });
  });

  it('gpu.fields must start with index (list or comma string)', () => {
    expect(loadError(oneTask('        scopes: { gpu: { fields: [power.draw, index] } }\n')).message).toMatch(
      /must start with 'index', got 'power.draw'/,
    );
    expect(
      loadError(oneTask('        scopes: { gpu: { fields: "utilization.gpu,index" } }\n')).message,
    ).toMatch(/must start with 'index'/);
    const ok = planOf(oneTask('        scopes: { gpu: { fields: "index, power.draw" } }\n'));
    expect(ok.schedule.collectors[0].gpuFields).toEqual(['index', 'power.draw']);
  });

  it('report.format [csv, pdf] is rejected', () => {
    expect(loadError(oneTask('        report: { format: [csv, pdf] }\n')).message).toMatch(
      /expected one of 'csv', 'svg', 'png', got string 'pdf'/,
    );
  });
});

describe('defaults and folders', () => {
  it('§11.4 no report key → report folders under lifecycle/ (csv + svg)', () => {
    const { schedule } = planOf(
      wf('  tasks:\n    - name: a\n      script: ["true"]\n', '').replace(
        '  name: wf\n',
        '  name: wf\n  monitor: {}\n',
      ),
    );
    expect(paths(schedule)).toEqual(['lifecycle/workflow/', 'lifecycle/a/']);
    expect(schedule.views[0].formats).toEqual(['csv', 'svg']);
    expect(normalizeMonitor({}, null)).toMatchObject({ intervalMs: 5000, report: { enabled: true } });
  });

  it('listing scopes turns on only those; enabled: false turns one off', () => {
    const m = normalizeMonitor(
      { scopes: { gpu: {}, cpu: { enabled: false }, custom: { script: ['x'] } } },
      'a',
    );
    expect(m.scopes).toEqual({ gpu: 5000 });
    expect(m.custom).toEqual(['x']);
  });

  it('§11.7 used_by_tasks: [llm_server] on loadgen → llm_server__monitored_by__loadgen', () => {
    const { schedule } = planOf(
      wf(
        '  tasks:\n    - name: llm_server\n      script: ["true"]\n    - name: loadgen\n      depends_on: [llm_server]\n      script: ["true"]\n      monitor:\n        scopes: { gpu: {} }\n        resources: { used_by_tasks: [llm_server] }\n',
      ),
    );
    expect(paths(schedule)).toEqual(['lifecycle/llm_server__monitored_by__loadgen/']);
    expect(schedule.views[0]).toMatchObject({ windowTask: 'loadgen', scopes: ['gpu'] });
  });

  it('§11.8 replicated task w ×2 under a workflow monitor → w_0, w_1', () => {
    const { schedule } = planOf(
      wf('  monitor: {}\n  tasks:\n    - name: w\n      replicas: { count: 2 }\n      script: ["true"]\n'),
    );
    expect(paths(schedule)).toEqual(['lifecycle/workflow/', 'lifecycle/w_0/', 'lifecycle/w_1/']);
  });

  it('§11.6 (plan) workflow + task monitor on one node → one collector with the union of scopes', () => {
    const { schedule } = planOf(
      wf(
        '  monitor: { interval: 1000, scopes: { cpu: {} } }\n  tasks:\n    - name: a\n      script: ["true"]\n      monitor: { interval: 500, scopes: { gpu: {}, cpu: {} } }\n',
      ),
    );
    expect(schedule.collectors).toHaveLength(1);
    expect(schedule.collectors[0]).toMatchObject({ scopes: { gpu: 500, cpu: 500 }, tickMs: 500 });
    expect(paths(schedule)).toEqual(['lifecycle/workflow/', 'lifecycle/a/']);
  });

  it('§11.10 kubernetes backend with monitor: → no collector, no folders, a warning', () => {
    const node = { name: 'pod-0', ip: '10.0.0.1', index: 0, numGpus: 8 };
    const k8s = plannedTask('a', {
      backend: 'k',
      backendType: 'kubernetes',
      nodes: [node],
      gpus: [0],
      monitor: {},
    });
    const local = plannedTask('b', {
      monitor: {},
      nodes: [{ name: 'localhost', ip: '127.0.0.1', index: 0, numGpus: null }],
    });
    const s = monitorSchedule({
      tasks: [k8s, local],
      workflowMonitor: {},
      backends: [
        plannedBackend({
          name: 'k',
          type: 'kubernetes',
          placeholder: true,
          nodes: [node],
          capabilities: kubernetesKind.capabilities,
        }),
        plannedBackend({ name: 'local', isDefault: false, nodes: local.nodes }),
      ],
    });
    expect(s.collectors.map((c) => c.backendType)).toEqual(['local']);
    expect(paths(s)).toEqual(['lifecycle/workflow/', 'lifecycle/b/']);
    expect(s.views[0].targets.map((t) => t.host)).toEqual(['localhost']);
    expect(s.warnings).toEqual([
      "workflow.monitor: backend 'k' (kubernetes) is skipped: node-level hardware monitoring is not implemented for this backend yet",
      "task 'a': monitor skipped on kubernetes backend 'k': node-level hardware monitoring is not implemented for this backend yet",
    ]);
  });

  it('no report folder: the dry-run says why (report.enabled true on a backend not sampled is not "false")', () => {
    const node = { name: 'pod-0', ip: '10.0.0.1', index: 0, numGpus: 8 };
    const k = plannedBackend({
      name: 'k',
      type: 'kubernetes',
      placeholder: true,
      nodes: [node],
      capabilities: kubernetesKind.capabilities,
    });
    const task = (monitor: PlannedTask['monitor'], backend = 'k') =>
      plannedTask('a', {
        backend,
        backendType: backend === 'k' ? 'kubernetes' : 'local',
        nodes: [backend === 'k' ? node : { name: 'localhost', ip: '127.0.0.1', index: 0, numGpus: null }],
        monitor,
      });
    const section = (monitor: PlannedTask['monitor'], backend = 'k') =>
      renderMonitorPlan({
        tasks: [task(monitor, backend)],
        workflowMonitor: null,
        backends:
          backend === 'k' ? [k] : [plannedBackend({ name: 'local', nodes: task(monitor, backend).nodes })],
      }).join('\n');
    // the original's dgx_trtllm_serve: a task monitor with report.enabled true on Kubernetes
    const skipped = section({ report: { enabled: true } });
    expect(skipped).toContain('(none: no monitor runs on these backends (see the warning))');
    expect(skipped).not.toContain('report.enabled is false');
    expect(section({ report: { enabled: false } }, 'local')).toContain(
      '(none: report.enabled is false; raw/ and sflow_monitor.log only)',
    );
  });
});

describe('§2 resources.nodes / resources.gpus (a Slurm placeholder allocation of 3 × 4 GPUs)', () => {
  const slurm = (tasks: string) =>
    `version: "0.1"\nbackends:\n  - name: s\n    type: slurm\n    account: acc\n    partition: p\n    time: "00:10:00"\n    default: true\n    nodes: 3\n    gpus_per_node: 4\nworkflow:\n  name: wf\n  tasks:\n${tasks}`;
  const targetsByView = (s: ReturnType<typeof planOf>['schedule']) =>
    Object.fromEntries(s.views.map((v) => [v.path, v.targets]));

  it('gpus: {indices: [1]} reports GPU 1 only, on the task’s own node', () => {
    const { plan, schedule } = planOf(
      slurm(
        '    - name: a\n      script: ["true"]\n      resources: { gpus: { count: 4 } }\n      monitor:\n        resources: { gpus: { indices: [1] } }\n',
      ),
    );
    expect(plan.tasks[0]).toMatchObject({ gpus: [0, 1, 2, 3] });
    expect(plan.tasks[0].nodes.map((n) => n.name)).toEqual(['s-node0']);
    expect(targetsByView(schedule)).toEqual({ 'lifecycle/a/': [{ host: 's-node0', gpus: [1] }] });
    expect(schedule.collectors.map((c) => c.host)).toEqual(['s-node0']);
  });

  it('gpus: {count: N} takes the first N of the task’s own GPUs, not GPUs 0..N-1', () => {
    const { plan, schedule } = planOf(
      slurm(
        '    - name: p\n      script: ["true"]\n      resources: { nodes: { indices: [1] }, gpus: { count: 2 } }\n' +
          '    - name: c\n      script: ["true"]\n      resources: { nodes: { indices: [1] }, gpus: { count: 2 } }\n      monitor:\n        resources: { gpus: { count: 1 } }\n' +
          '    - name: d\n      script: ["true"]\n      resources: { nodes: { indices: [2] }, gpus: { count: 4 } }\n      monitor:\n        resources: { gpus: { count: 2 } }\n',
      ),
    );
    expect(plan.tasks.map((t) => [t.name, t.gpus])).toEqual([
      ['p', [0, 1]],
      ['c', [2, 3]],
      ['d', [0, 1, 2, 3]],
    ]);
    expect(targetsByView(schedule)).toEqual({
      'lifecycle/c/': [{ host: 's-node1', gpus: [2] }],
      'lifecycle/d/': [{ host: 's-node2', gpus: [0, 1] }],
    });
  });

  it('nodes: {indices: [0, 2]} picks backend-allocation nodes, not the task’s own, each with its GPUs', () => {
    const { plan, schedule } = planOf(
      slurm(
        '    - name: a\n      script: ["true"]\n      resources: { nodes: { indices: [1] }, gpus: { count: 4 } }\n      monitor:\n        scopes: { gpu: {} }\n        resources: { nodes: { indices: [0, 2] } }\n',
      ),
    );
    expect(plan.tasks[0].nodes.map((n) => n.name)).toEqual(['s-node1']);
    expect(targetsByView(schedule)).toEqual({
      'lifecycle/a/': [
        { host: 's-node0', gpus: [0, 1, 2, 3] },
        { host: 's-node2', gpus: [0, 1, 2, 3] },
      ],
    });
    expect(schedule.collectors.map((c) => [c.host, c.backend])).toEqual([
      ['s-node0', 's'],
      ['s-node2', 's'],
    ]);
  });
});

describe('§11.11 --enable-task-monitor / --enable-workflow-monitor', () => {
  const recipe = wf(
    '  tasks:\n    - name: a\n      script: ["true"]\n      monitor: { interval: 700, scopes: { cpu: {} }, report: { format: [csv] } }\n    - name: b\n      script: ["true"]\n',
  );
  it('"a b", a,b and repeated flags are equivalent; a declared monitor is not altered', () => {
    expect(parseTaskMonitorFlag(['a b'])).toEqual(['a', 'b']);
    expect(parseTaskMonitorFlag(['a,b'])).toEqual(['a', 'b']);
    expect(parseTaskMonitorFlag(['a', 'b'])).toEqual(['a', 'b']);
    const results = [['a b'], ['a,b'], ['a', 'b']].map((tasks) => planOf(recipe, { tasks }).plan);
    for (const p of results) {
      expect(p.tasks[0].monitor).toEqual({ interval: 700, scopes: { cpu: {} }, report: { format: ['csv'] } });
      expect(p.tasks[1].monitor).toEqual({});
    }
  });

  it('--enable-workflow-monitor fills only a gap', () => {
    expect(planOf(recipe, { workflow: true }).plan.workflowMonitor).toEqual({});
    const declared = recipe.replace('  name: wf\n', '  name: wf\n  monitor: { interval: 300 }\n');
    expect(planOf(declared, { workflow: true }).plan.workflowMonitor).toEqual({ interval: 300 });
  });

  it('an unknown task names the known ones', () => {
    try {
      planOf(recipe, { tasks: ['nosuch'] });
      throw new Error('no error');
    } catch (e) {
      expect((e as SflowError).message).toMatch(/--enable-task-monitor: unknown task 'nosuch'/);
      expect((e as SflowError).hint).toBe('known tasks: a, b');
      expect((e as SflowError).exitCode).toBe(2);
    }
  });
});
