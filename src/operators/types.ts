/** What an operator needs to turn a planned task into the launch specs its backend executes. */
import type { NodeLaunchSpec, OperatorNode } from './launch-spec.js';

export type { OperatorNode };

export interface OperatorInput {
  task: string;
  type: string;
  config: Record<string, unknown>;
  script: string;
  nodes: OperatorNode[];
  gpus: number[] | null;
  env: Record<string, string>;
  /** allocation id of the backend (Slurm job id; '0' for placeholders) */
  allocationId: string;
  backendConfig: Record<string, unknown>;
  /**
   * containers are started with `--rm`: the backend does not remove them itself (from its
   * capabilities, `removesContainers`)
   */
  removeContainers?: boolean;
  /** the container CLI program of container operators (the controller's `SFLOW_DOCKER_CLI`); absent: `docker` */
  containerCli?: string;
  /** local paths of the fs:// and file:// artifacts (container operators mount their folders) */
  artifactPaths?: string[];
  /** the task's log file (`<task dir>/<task>.log`); a container that writes it itself appends to it */
  logPath?: string;
  /**
   * Set when the script is too large for one argument (script-file.ts) and the operator can run it
   * from a file: the file the run writes the script to before any task starts.
   */
  scriptFile?: string;
}

export type ArgvBuilder = (input: OperatorInput) => string[];

export interface Operator {
  type: string;
  /** one launch per node (containers, pods) instead of one command that spans every node */
  perNode: boolean;
  /** the script is a shell script (`fail_fast` prepends `set -e`) */
  shell: boolean;
  /**
   * the `<family>_cmds.log` of the run folder its launch commands are logged in (runtime.md 8.3,
   * v0.3 names: `srun` → slurm, `docker_run` → docker; `backend` for those the backend builds)
   */
  commandLog: string;
  /** runs a script too large for one argument from a file (`OperatorInput.scriptFile`) */
  scriptFromFile?: boolean;
  argv: ArgvBuilder;
  /** image, mounts, cwd of a containerised operator (and, per node, its env and container part) */
  extras?: (
    input: OperatorInput,
  ) => Pick<NodeLaunchSpec, 'image' | 'mounts' | 'cwd'> & Partial<Pick<NodeLaunchSpec, 'env' | 'container'>>;
}
