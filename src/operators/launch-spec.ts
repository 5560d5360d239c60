/**
 * What an operator hands its backend: one launch spec per node (Docker containers, Kubernetes pods,
 * MPI ranks) or a single spec when one command spans every node (bash, srun). The plan passes plain
 * node data in; nothing here reads the plan.
 */

/** A node as operators see it (the plan hands plain node data; operators import nothing from the plan). */
export interface OperatorNode {
  name: string;
  ip: string;
  index: number;
}

export interface NodeLaunchSpec {
  /** the node this spec runs on; absent when the task has no node (never on a built plan) */
  node?: OperatorNode;
  /** position of the node among the task's nodes (`SFLOW_TASK_NODE_INDEX`) */
  nodeIndex: number;
  /** the exact command line the backend starts */
  argv: string[];
  /** sflow's environment entries for this node (the inherited environment is not included) */
  env: Record<string, string>;
  /** working directory inside the container / on the node, when the operator sets one */
  cwd?: string;
  /** container image, for operators that run in one */
  image?: string;
  /** bind mounts `host:container[:ro]` */
  mounts: string[];
  /** devices the node's part of the task gets (GPU indices as planned) */
  devices: string[];
}
