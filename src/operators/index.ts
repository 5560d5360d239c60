/**
 * Operator registry: type → how it turns a planned task into launch specs. Each backend's default
 * operator is a capability of the backend (src/backends/registry.ts), not listed here.
 */
import { bashArgv } from './bash.js';
import { dockerRunArgv, dockerRunExtras } from './docker-run.js';
import { k8sArgv, k8sExtras } from './k8s.js';
import type { NodeLaunchSpec } from './launch-spec.js';
import { pythonArgv } from './python.js';
import { srunArgv } from './srun.js';
import { sshArgv } from './ssh.js';
import type { Operator, OperatorInput, OperatorType } from './types.js';

const op = <T extends OperatorType>(type: string, o: Omit<Operator<T>, 'type'>): Operator<T> => ({
  type,
  ...o,
});

/** each type with its own builders (`docker`: the 0.3 name of `docker_run`, kept for its command log) */
export const OPERATORS: { readonly [K in OperatorType]: Operator<K> } & {
  readonly docker: Operator<'docker_run'>;
} = {
  bash: op('bash', { commandLog: 'bash', perNode: false, shell: true, scriptFromFile: true, argv: bashArgv }),
  srun: op('srun', { commandLog: 'slurm', perNode: false, shell: true, argv: srunArgv }),
  docker_run: op('docker_run', {
    commandLog: 'docker',
    perNode: true,
    shell: true,
    argv: dockerRunArgv,
    extras: dockerRunExtras,
  }),
  docker: op('docker', {
    commandLog: 'docker',
    perNode: true,
    shell: true,
    argv: dockerRunArgv,
    extras: dockerRunExtras,
  }),
  python: op('python', {
    commandLog: 'python',
    perNode: false,
    shell: false,
    scriptFromFile: true,
    argv: pythonArgv,
  }),
  ssh: op('ssh', { commandLog: 'ssh', perNode: false, shell: true, argv: sshArgv }),
  k8s: op('k8s', { commandLog: 'backend', perNode: true, shell: true, argv: k8sArgv, extras: k8sExtras }),
  k8s_mpi: op('k8s_mpi', {
    commandLog: 'backend',
    perNode: false,
    shell: true,
    argv: k8sArgv,
    extras: k8sExtras,
  }),
};

const BY_TYPE: Readonly<Record<string, Operator>> = OPERATORS;

export function operatorOf(type: string): Operator | undefined {
  return Object.hasOwn(BY_TYPE, type) ? BY_TYPE[type] : undefined;
}

/**
 * The launch specs of one task: one per node for per-node operators (each with its own
 * `SFLOW_TASK_NODE_INDEX` and `SFLOW_TASK_NODE_NAME`), otherwise a single spec on the task's first node (index 0).
 */
export function launchSpecs<T extends OperatorType>(
  operator: Operator<T>,
  input: OperatorInput<T>,
): NodeLaunchSpec[] {
  const devices = (input.gpus ?? []).map(String);
  // extras per node: a container's name, endpoint and mounts depend on its node
  // built as a literal of fixed shape, not one that starts with a spread: a spread-first literal
  // gets a hidden class of its own per object, and a plan keeps one spec per replica
  const one = (nodeIndex: number, env: Record<string, string>): NodeLaunchSpec => {
    const nodeInput: OperatorInput<T> = env === input.env ? input : { ...input, env };
    const node = input.nodes[nodeIndex];
    const argv = operator.argv(nodeInput);
    const spec: NodeLaunchSpec = node
      ? { node, nodeIndex, argv, env, mounts: [], devices }
      : { nodeIndex, argv, env, mounts: [], devices };
    const extras = operator.extras?.(nodeInput);
    return extras ? Object.assign(spec, extras) : spec;
  };
  if (!operator.perNode || input.nodes.length <= 1) return [one(0, input.env)];
  return input.nodes.map((_, i) => {
    const env: Record<string, string> = {};
    for (const k in input.env) env[k] = input.env[k];
    env.SFLOW_TASK_NODE_INDEX = String(i);
    env.SFLOW_TASK_NODE_NAME = input.nodes[i].name;
    return one(i, env);
  });
}

export type {
  ArgvBuilder,
  Operator,
  OperatorConfig,
  OperatorExtras,
  OperatorInput,
  OperatorNode,
  OperatorType,
} from './types.js';
export { KERNEL_ARG_LIMIT, SCRIPT_ARG_LIMIT, scriptTooLargeForArgv } from './script-file.js';
export type { NodeLaunchSpec } from './launch-spec.js';
