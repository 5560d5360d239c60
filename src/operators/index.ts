/** Operator registry: type → argv builder, and each backend type's default operator. */
import { bashArgv } from './bash.js';
import { dockerRunArgv } from './docker-run.js';
import { k8sArgv } from './k8s.js';
import { pythonArgv } from './python.js';
import { srunArgv } from './srun.js';
import { sshArgv } from './ssh.js';
import type { ArgvBuilder } from './types.js';

export const OPERATORS: Record<string, ArgvBuilder> = {
  bash: bashArgv,
  srun: srunArgv,
  docker_run: dockerRunArgv,
  docker: dockerRunArgv,
  python: pythonArgv,
  ssh: sshArgv,
  k8s: k8sArgv,
  k8s_mpi: k8sArgv,
};

export const DEFAULT_OPERATOR: Record<string, string | null> = {
  local: 'bash',
  slurm: 'srun',
  docker: 'docker_run',
  kubernetes: null,
};

/** operator types whose script is a shell script (fail_fast prepends `set -e`) */
export const SHELL_OPERATORS = new Set(['bash', 'srun', 'docker_run', 'docker', 'ssh', 'k8s', 'k8s_mpi']);

export type { ArgvBuilder, OperatorInput } from './types.js';
