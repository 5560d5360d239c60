/** `ssh … "bash -lc <payload>"` with the task env exported in the payload (backends.md §6.5). */
import { SflowError } from '../util/sflow-error.js';
import type { ArgvBuilder } from './types.js';

export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_/.,:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export const sshArgv: ArgvBuilder<'ssh'> = ({ task, config, script, env }) => {
  const exports = Object.entries(env).map(([k, v]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) {
      throw new SflowError(
        'plan.env_name',
        `Invalid environment variable name '${k}' for ssh task '${task}'`,
        { phase: 'plan' },
      );
    }
    return `export ${k}=${shellQuote(v)}`;
  });
  const argv = ['ssh'];
  if (config.port !== undefined && config.port !== null) argv.push('-p', String(config.port));
  if (config.identity_file) argv.push('-i', String(config.identity_file));
  argv.push(...(config.extra_args ?? []).map(String));
  argv.push(config.user ? `${config.user}@${config.host}` : String(config.host));
  argv.push(`bash -lc ${shellQuote([...exports, script].join('\n'))}`);
  return argv;
};
