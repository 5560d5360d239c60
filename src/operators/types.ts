/** What an operator needs to turn a planned task into the argv its backend executes. */
import type { PlannedNode } from '../plan/types.js';

export interface OperatorInput {
  task: string;
  type: string;
  config: Record<string, any>;
  script: string;
  nodes: PlannedNode[];
  gpus: number[] | null;
  env: Record<string, string>;
  /** allocation id of the backend (Slurm job id; '0' for placeholders) */
  allocationId: string;
  backendConfig: Record<string, any>;
}

export type ArgvBuilder = (input: OperatorInput) => string[];
