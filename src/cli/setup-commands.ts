/**
 * The commands that set sflow up around a user's work: `sample`, `skill`, `upgrade` (alias
 * `update`) and `completion`. Each module is imported only when its command runs.
 */
import { Argument, Command, Option } from 'commander';
import { PACKAGE_NAME } from '../util/package-name.js';

export function registerSetupCommands(program: Command, docs: string): void {
  program
    .command('sample')
    .description('list the shipped sample recipes, or copy one here')
    .argument('[name]', 'sample name, e.g. self_contained/local/dag (or any unambiguous tail: local/dag)')
    .option('-l, --list', 'list the samples with a one-line description')
    .option('-o, --output <path>', 'destination folder (default: the current directory), or a .yaml file')
    .option('-f, --force', 'overwrite an existing file or folder')
    .addHelpText('after', `\n${docs}`)
    .action(async (name: string | undefined, opts: Record<string, unknown>) => {
      const { sampleCommand } = await import('./sample.js');
      process.exitCode = await sampleCommand(name, opts);
    });

  program
    .command('skill')
    .description('install sflow skills for coding agents (Claude Code, Cursor, Codex)')
    .addOption(
      new Option('-t, --target <agent>', 'which agent to install for').choices([
        'claude',
        'cursor',
        'codex',
        'all',
      ]),
    )
    .option('-g, --global', "install into the user's home instead of the current project")
    .option('-l, --list', 'list the skills and where each agent would get them')
    .option('-f, --force', 'overwrite files that differ from the shipped ones')
    .option('--project-dir <dir>', 'project root for a project install (default: the current directory)')
    .addHelpText('after', `\n${docs}`)
    .action(async (opts: Record<string, unknown>) => {
      const { skillCommand } = await import('./skill.js');
      process.exitCode = await skillCommand(opts);
    });

  program
    .command('upgrade')
    .alias('update')
    .description(`upgrade this sflow installation in place (npm package ${PACKAGE_NAME})`)
    .option(
      '--sflow-version <version>',
      `a specific release of ${PACKAGE_NAME} (e.g. 0.2.0) instead of the latest`,
    )
    .option('--branch <ref>', 'install a git branch, tag or commit of the sflow repository instead')
    .option('--repo <url>', 'git repository for --branch (default: the one sflow was published from)')
    .option('--registry <url>', 'npm registry to install from')
    .option(
      '--sflow-index-url <url>',
      "a private registry for sflow itself (nv-sflow's flag; a scoped package takes only its scope from it)",
    )
    .option('--sflow-source-path <dir>', 'install from a local sflow checkout (npm links the folder)')
    .option('--dry-run', 'print the resolved install command and stop')
    .option('--force', 'upgrade even over a linked or source-checkout installation')
    .addHelpText('after', `\n${docs}`)
    .action(async (opts: Record<string, unknown>) => {
      const { upgradeCommand } = await import('./upgrade.js');
      process.exitCode = await upgradeCommand(opts);
    });

  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      '\nInstall:\n  bash: sflow completion bash > ~/.local/share/bash-completion/completions/sflow\n' +
        '  zsh:  sflow completion zsh > "${fpath[1]}/_sflow"   (then: autoload -U compinit && compinit)\n' +
        '  fish: sflow completion fish > ~/.config/fish/completions/sflow.fish\n' +
        `\n${docs}`,
    )
    .action(async (shell: string) => {
      const { completionCommand } = await import('./completion.js');
      const { addBackendFlags } = await import('./backend-flags.js');
      // the backend types' flags are declared when their command runs: completion lists them too
      for (const c of program.commands) await addBackendFlags(c);
      process.exitCode = completionCommand(shell, program);
    });
}
