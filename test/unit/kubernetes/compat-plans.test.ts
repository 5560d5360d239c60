/**
 * The original tool's Kubernetes recipes (../shared/compat: 8 self-contained recipes and the
 * k8s / k8s_mpi backend fragments composed with workloads) plan as their comments say: pinned
 * node indices, one pod per reserved node, GPU packing, merge groups and in-pod gates.
 */
import { expect, it } from 'vitest';
import type { PlannedTask } from '../../../src/plan/types.js';
import { describeWithShared } from '../../helpers/shared.js';
import { compatPlan } from './compat-plan.js';

const byName = (tasks: PlannedTask[]) => Object.fromEntries(tasks.map((t) => [t.name, t]));
const where = (t: PlannedTask) => t.nodes.map((n) => n.index);
const BA = 'modular/backend_agnostic';

describeWithShared('compat', 'Kubernetes recipes of the original tool plan as their comments say', () => {
  it('kubernetes_hello_world: one pod on the one reserved node', () => {
    const t = byName(compatPlan(['src/sflow/samples/kubernetes_hello_world.yaml']).tasks);
    expect(where(t.hello)).toEqual([0]);
    expect(t.hello.launch).toHaveLength(1);
  });

  it('kubernetes_pd_smoke: leader on node 0, worker on node 1, decode on node 2 (pinned)', () => {
    const t = byName(compatPlan(['examples/kubernetes_pd_smoke.yaml']).tasks);
    expect([where(t.prefill_leader), where(t.prefill_worker), where(t.decode_client)]).toEqual([
      [0],
      [1],
      [2],
    ]);
  });

  it('kubernetes_multinode: one task split into 4 pods, one per node, 8 GPUs each, leader = index 0', () => {
    const t = byName(compatPlan(['examples/kubernetes_multinode.yaml']).tasks).distributed_train;
    expect(where(t)).toEqual([0, 1, 2, 3]);
    expect(t.launch.map((s) => s.nodeIndex)).toEqual([0, 1, 2, 3]);
    expect(t.launch.map((s) => s.env.SFLOW_TASK_NODE_INDEX)).toEqual(['0', '1', '2', '3']);
    expect(new Set(t.launch.map((s) => s.env.SFLOW_LEADER_ADDRESS))).toEqual(new Set([t.nodes[0].ip]));
    expect(t.gpuSlots).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('self_contained multinode: one pod per reserved node, NUM_NODES from one variable', () => {
    const t = byName(
      compatPlan(['examples/self_contained/kubernetes/multinode.yaml']).tasks,
    ).distributed_train;
    expect(where(t)).toEqual([0, 1]);
    expect(t.launch).toHaveLength(2);
  });

  it('merge_pod_smoke: four 1-GPU tasks fold into one pod; client is gated on both services', () => {
    const t = byName(compatPlan(['examples/self_contained/kubernetes/merge_pod_smoke.yaml']).tasks);
    const members = ['service_a', 'service_b', 'warmup', 'client'];
    for (const m of members) {
      expect(t[m].colocated).toMatchObject({ group: 'g1', members, gpus: 4 });
      // its own GPU first, then the rest of the pod's
      expect(t[m].env.CUDA_VISIBLE_DEVICES.split(',')).toHaveLength(4);
      expect(t[m].env.CUDA_VISIBLE_DEVICES.split(',')[0]).toBe(String(t[m].gpuSlots![0]));
    }
    expect(t.client.colocated!.gatedOn).toEqual(['service_a', 'service_b']);
    expect(t.warmup.colocated!.gatedOn).toEqual([]);
  });

  it('mpi_smoke, dgx/gb trtllm_serve: k8s_mpi tasks span their nodes and hold the GPUs', () => {
    const mpi = byName(compatPlan(['examples/self_contained/kubernetes/mpi_smoke.yaml']).tasks);
    expect(where(mpi.mpi_compound_line)).toEqual([0, 1]);
    const dgx = byName(
      compatPlan(['examples/self_contained/kubernetes/qwen3_8b/dgx_trtllm_serve.yaml']).tasks,
    );
    expect(dgx.server.gpuSlots).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const gb = byName(
      compatPlan(['src/sflow/samples/self_contained/kubernetes/qwen3_8b/gb_trtllm_serve.yaml']).tasks,
    );
    expect(where(gb.server)).toEqual([0, 1]);
    expect(gb.server.colocated).toBeUndefined();
  });

  it('backend fragment k8s.yaml + disaggregated sglang: prefill and decode pack onto node 0 and share one pod', () => {
    const p = compatPlan(
      [
        `examples/${BA}/backends/k8s.yaml`,
        `src/sflow/samples/${BA}/workloads/dynamo_common.yaml`,
        `src/sflow/samples/${BA}/workloads/dynamo_sglang_disagg.yaml`,
        `src/sflow/samples/${BA}/benchmark.yaml`,
      ],
      ['SERVER_GPUS=4'],
    );
    const t = byName(p.tasks);
    expect(t.prefill_server.gpuSlots).toEqual([0, 1, 2, 3]);
    expect(t.decode_server.gpuSlots).toEqual([4, 5, 6, 7]);
    expect(t.prefill_server.colocated?.members).toEqual(['prefill_server', 'decode_server']);
    // CPU-only helpers keep their own pods
    expect(t.nats_server.colocated).toBeUndefined();
  });

  it('backend fragment k8s_mpi.yaml + trtllm_serve: the server spans 2 nodes with 8 GPUs each', () => {
    const t = byName(
      compatPlan(
        [
          `src/sflow/samples/${BA}/backends/k8s_mpi.yaml`,
          `examples/${BA}/workloads/trtllm_serve.yaml`,
          `src/sflow/samples/${BA}/benchmark.yaml`,
        ],
        ['NUM_NODES=2', 'SERVER_GPUS=16'],
      ).tasks,
    );
    expect(where(t.server)).toEqual([0, 1]);
    expect(t.server.gpuSlots).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});
