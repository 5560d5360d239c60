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
  /** the container of a `docker_run` node (operators/docker-run.ts builds its command line) */
  container?: ContainerLaunch;
}

/** One node's container (Docker backend): everything of `docker run` that is not image/mounts/cwd. */
export interface ContainerLaunch {
  /** the CLI program that starts, stops and removes it (`docker`, or `SFLOW_DOCKER_CLI`); absent: `docker` */
  program?: string;
  /** CLI endpoint (`-H ssh://[user@]address` of a pool host); absent: the CLI's own default */
  host?: string;
  /** `sflow-p<driver pid>-<task>-<node>` */
  name: string;
  /** `--gpus` value as passed (`"device=0,1"` with its quotes, or the operator's raw `gpus:`) */
  gpus?: string;
  /** variables forwarded by name (`-e KEY`: values come from the CLI's environment, never argv) */
  envKeys: string[];
  /** backend, host and operator `extra_args`, in that order */
  extraArgs: string[];
  /** the command inside the container (`bash -lc <script>`) */
  command: string[];
  /** `--rm`: on a backend other than docker nobody removes the ended container, so it removes itself */
  rm?: boolean;
  /**
   * log offload (`offload_task_logs` / `log_to_file`): the container appends its output to this
   * file (the task log, through the run directory's mount) instead of the attached client
   * carrying it
   */
  logFile?: string;
}
