/** Slurm's `sflow run` flag (light: the CLI reads it without loading the backend registry). */
import type { BackendCliFlag } from '../kind.js';

export const SLURM_CLI_FLAGS: readonly BackendCliFlag[] = [
  {
    flags: '-e, --extra-args <arg>',
    description: 'appended to every slurm backend extra_args',
    repeatable: true,
    commands: ['run'],
  },
];
