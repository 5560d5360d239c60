/** `srun` argv from the operator fields (backends.md §6.3 field → flag table, §6.3.3 injected values). */
import { autoContainerMounts, stepScript } from './srun-step.js';
import type { ArgvBuilder, OperatorConfig } from './types.js';

type SrunConfig = OperatorConfig<'srun'>;

const VALUE_FLAGS: [keyof SrunConfig, string][] = [
  ['partition', '--partition'],
  ['account', '--account'],
  ['qos', '--qos'],
  ['reservation', '--reservation'],
  ['time', '--time'],
  ['constraint', '--constraint'],
];
const AFTER_NODES: [keyof SrunConfig, string][] = [
  ['ntasks', '--ntasks'],
  ['ntasks_per_node', '--ntasks-per-node'],
  ['cpus_per_task', '--cpus-per-task'],
  ['gpus', '--gpus'],
  ['gpus_per_task', '--gpus-per-task'],
  ['gres', '--gres'],
  ['mem', '--mem'],
  ['mem_per_cpu', '--mem-per-cpu'],
];

const set = (v: unknown): boolean => v !== undefined && v !== null && v !== '';

export function containerInUse(
  config: Pick<SrunConfig, 'container_image' | 'container_name' | 'extra_args'>,
): boolean {
  const extra = config.extra_args ?? [];
  return (
    set(config.container_image) ||
    set(config.container_name) ||
    extra.some(
      (a) => typeof a === 'string' && (a.startsWith('--container-image') || a.startsWith('--container-name')),
    )
  );
}

export const srunArgv: ArgvBuilder<'srun'> = (input) => {
  const { task, config, nodes, allocationId } = input;
  const argv = ['srun'];
  const jobId = set(config.job_id) && String(config.job_id) !== '0' ? String(config.job_id) : allocationId;
  if (jobId && jobId !== '0') argv.push('--jobid', jobId);
  for (const [k, f] of VALUE_FLAGS) if (set(config[k])) argv.push(f, String(config[k]));
  if (config.exclusive === true) argv.push('--exclusive');
  if (set(config.chdir)) argv.push('--chdir', String(config.chdir));
  const nodelist: string[] =
    Array.isArray(config.nodelist) && config.nodelist.length
      ? config.nodelist.map(String)
      : nodes.map((n) => n.name);
  const nodeCount =
    set(config.nodes) && String(config.nodes) !== '0' ? String(config.nodes) : String(nodelist.length);
  if (nodeCount !== '0') argv.push('--nodes', nodeCount);
  if (nodelist.length) argv.push('--nodelist', nodelist.join(','));
  for (const [k, f] of AFTER_NODES) if (set(config[k])) argv.push(f, String(config[k]));
  argv.push('--job-name', task);
  if (config.unbuffered !== false) argv.push('--unbuffered');
  const exp = config.export === undefined || config.export === null ? 'ALL' : String(config.export);
  if (exp) argv.push('--export', exp);
  if (config.label !== false) argv.push('--label');
  if (config.kill_on_bad_exit === true) argv.push('--kill-on-bad-exit');
  if (config.overlap !== false) argv.push('--overlap');
  if (set(config.wait)) argv.push('--wait', String(config.wait));
  if (set(config.mpi)) argv.push('--mpi', String(config.mpi));
  const extra: string[] = (config.extra_args ?? []).map(String);
  const passThrough: string[] = [];
  const extraMounts: string[] = [];
  for (let i = 0; i < extra.length; i++) {
    const a = extra[i];
    if (a === '--container-mounts' && i + 1 < extra.length) extraMounts.push(...extra[++i].split(','));
    else if (a.startsWith('--container-mounts='))
      extraMounts.push(...a.slice('--container-mounts='.length).split(','));
    else passThrough.push(a);
  }
  if (containerInUse(config)) {
    if (set(config.container_image)) argv.push('--container-image', String(config.container_image));
    if (set(config.container_name)) argv.push('--container-name', String(config.container_name));
    argv.push(config.container_mount_home === true ? '--container-mount-home' : '--no-container-mount-home');
    if (config.container_writable !== false) argv.push('--container-writable');
    const given = [...(config.container_mounts ?? []).map(String), ...extraMounts].filter(Boolean);
    const mounts = [...new Set(given), ...autoContainerMounts(input, given)];
    if (mounts.length) argv.push('--container-mounts', mounts.join(','));
    if (set(config.container_workdir)) argv.push('--container-workdir', String(config.container_workdir));
    if (config.container_remap_root === true) argv.push('--container-remap-root');
  }
  argv.push(...passThrough, 'bash', '-c', stepScript(input));
  return argv;
};
