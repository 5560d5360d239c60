/** A non-negative number from an environment variable (sflow's tuning knobs), with a clear error. */
import { SflowError } from '../util/sflow-error.js';

export function envNumber(env: NodeJS.ProcessEnv, name: string, def: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min)
    throw new SflowError('config.env', `${name} must be a number ≥ ${min}, got '${raw}'`, {
      phase: 'preflight',
      hint: `unset ${name} to use the default (${def})`,
    });
  return n;
}
