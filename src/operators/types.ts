/** What an operator needs to turn a planned task into the launch specs its backend executes. */
import type { Resolved } from '../config/resolve.js';
import type { Operator as OperatorEntry, OperatorType } from '../config/schema/index.js';
import type { NodeLaunchSpec, OperatorNode } from './launch-spec.js';

export type { OperatorNode, OperatorType };

/** one entry of a union, resolved, without the fields that name it (distributes over the union) */
type ConfigOf<E> = E extends { type: string } ? Omit<Resolved<E>, 'name' | 'type'> : never;

/**
 * The settings of an operator type: its `operators[]` entry (its schema's type) with the task's
 * override merged in and expressions resolved, less `name` and `type`. `OperatorConfig` alone is
 * the union over every type; narrow on the type to read one type's fields.
 */
export type OperatorConfig<T extends OperatorType = OperatorType> = ConfigOf<
  Extract<OperatorEntry, { type: T }>
>;

export interface OperatorInput<T extends OperatorType = OperatorType> {
  task: string;
  type: T;
  config: OperatorConfig<T>;
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

export type ArgvBuilder<T extends OperatorType = OperatorType> = (input: OperatorInput<T>) => string[];

/**
 * How one operator type launches a task. `argv` and `extras` are methods: the registry
 * (src/operators/index.ts) pairs each type with the builders of that type, so the input a builder
 * gets always carries that type's config.
 */
export interface Operator<T extends OperatorType = OperatorType> {
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
  argv(this: void, input: OperatorInput<T>): string[];
  /** image, mounts, cwd of a containerised operator (and, per node, its env and container part) */
  extras?(this: void, input: OperatorInput<T>): OperatorExtras;
}

export type OperatorExtras = Pick<NodeLaunchSpec, 'image' | 'mounts' | 'cwd'> &
  Partial<Pick<NodeLaunchSpec, 'env' | 'container'>>;
