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
}

export type ArgvBuilder = (input: OperatorInput) => string[];

export interface Operator {
  type: string;
  /** one launch per node (containers, pods) instead of one command that spans every node */
  perNode: boolean;
  /** the script is a shell script (`fail_fast` prepends `set -e`) */
  shell: boolean;
  argv: ArgvBuilder;
  /** image, mounts, cwd of a containerised operator (and, per node, its env and container part) */
  extras?: (
    input: OperatorInput,
  ) => Pick<NodeLaunchSpec, 'image' | 'mounts' | 'cwd'> & Partial<Pick<NodeLaunchSpec, 'env' | 'container'>>;
}
