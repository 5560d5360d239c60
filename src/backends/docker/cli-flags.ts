/** Docker's `sflow run` flag (light: the CLI reads it without loading the backend registry). */
import type { BackendCliFlag } from '../kind.js';

export const DOCKER_CLI_FLAGS: readonly BackendCliFlag[] = [
  {
    flags: '--extra-docker-args <arg>',
    description: 'merged into every docker backend extra_args, per option, this flag winning (repeatable)',
    repeatable: true,
    commands: ['run'],
  },
];
