/** `docker run` argv (backends.md §6.4, §3.4–3.6): one container per assigned host. */
import type { ArgvBuilder, Operator } from './types.js';

/** image, mounts and working directory as structured data, for a backend that builds its own run */
export const dockerRunExtras: NonNullable<Operator['extras']> = ({ config, backendConfig }) => {
  const workdir = config.workdir ?? backendConfig.workdir;
  return {
    image: String(config.image ?? backendConfig.image ?? '<image>'),
    mounts: [...((backendConfig.mounts as unknown[]) ?? []), ...((config.mounts as unknown[]) ?? [])].map(
      String,
    ),
    ...(workdir ? { cwd: String(workdir) } : {}),
  };
};

export const dockerRunArgv: ArgvBuilder = ({ task, config, script, gpus, env, backendConfig }) => {
  const argv = ['docker', 'run', '--rm', '--name', `sflow-${task.replace(/[^A-Za-z0-9_.-]/g, '_')}`];
  if (gpus && gpus.length) argv.push('--gpus', `"device=${gpus.join(',')}"`);
  else if (config.gpus) argv.push('--gpus', String(config.gpus));
  const workdir = config.workdir ?? backendConfig.workdir;
  if (workdir) argv.push('-w', String(workdir));
  for (const m of [...((backendConfig.mounts as unknown[]) ?? []), ...((config.mounts as unknown[]) ?? [])])
    argv.push('-v', String(m));
  if (config.pass_envs !== false) for (const k of Object.keys(env)) argv.push('-e', k);
  argv.push(
    ...[...((backendConfig.extra_args as unknown[]) ?? []), ...((config.extra_args as unknown[]) ?? [])].map(
      String,
    ),
  );
  argv.push(String(config.image ?? backendConfig.image ?? '<image>'), 'bash', '-lc', script);
  return argv;
};
