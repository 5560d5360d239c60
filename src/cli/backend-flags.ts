/**
 * The flags the backend types add to `run` and `recover` (`-e`, `--extra-docker-args`, `--kube*`),
 * declared from the backend registry. The registry is imported only when one of those commands is
 * dispatched (main.ts's preSubcommand hook) or a completion script is written, so `sflow --help`
 * stays as light as commander alone.
 */
import type { Command } from 'commander';
import type { BackendCliCommand, BackendCliFlag } from '../backends/kind.js';

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

const COMMANDS: readonly string[] = ['run', 'recover'] satisfies BackendCliCommand[];

function isBackendCommand(name: string): name is BackendCliCommand {
  return COMMANDS.includes(name);
}

/** Adds the given flags to a command (a flag it already has is left as it is). */
export function addFlags(cmd: Command, flags: readonly BackendCliFlag[]): Command {
  for (const f of flags) {
    const long = /--[\w-]+/.exec(f.flags)?.[0];
    if (cmd.options.some((o) => o.long === long)) continue;
    if (f.repeatable) cmd.option(f.flags, f.description, collect);
    else cmd.option(f.flags, f.description);
  }
  return cmd;
}

/** Adds the backend types' flags (`flagsFor`: the registry's) to `cmd` when it is one of their commands. */
export function declareBackendFlags(
  cmd: Command,
  flagsFor: (command: BackendCliCommand) => readonly BackendCliFlag[],
): void {
  const name = cmd.name();
  if (isBackendCommand(name)) addFlags(cmd, flagsFor(name));
}

/** The same, importing the backend registry first (only for the commands the flags belong to). */
export async function addBackendFlags(cmd: Command): Promise<void> {
  if (!isBackendCommand(cmd.name())) return;
  const { lightBackendCliFlags } = await import('../backends/cli-flags.js');
  declareBackendFlags(cmd, lightBackendCliFlags);
}
