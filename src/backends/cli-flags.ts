/**
 * The backend types' command-line flags without the registry (which loads zod and every settings
 * schema): `sflow run --help` must stay light. Each table is the one its kind declares as
 * `cliFlags`; test/unit/cli/backend-flags.test.ts checks that this list and the registry agree.
 */
import type { BackendCliCommand, BackendCliFlag } from './kind.js';
import { DOCKER_CLI_FLAGS } from './docker/cli-flags.js';
import { KUBERNETES_CLI_FLAGS } from './kubernetes/cli-flags.js';
import { SLURM_CLI_FLAGS } from './slurm/cli-flags.js';

const TABLES: readonly (readonly BackendCliFlag[])[] = [
  DOCKER_CLI_FLAGS,
  SLURM_CLI_FLAGS,
  KUBERNETES_CLI_FLAGS,
];

/** The flags every backend type adds to one command (each flag once). */
export function lightBackendCliFlags(command: BackendCliCommand): BackendCliFlag[] {
  const out: BackendCliFlag[] = [];
  for (const f of TABLES.flat())
    if (f.commands.includes(command) && !out.some((o) => o.flags === f.flags)) out.push(f);
  return out;
}
