/**
 * Entry point. Only commander is loaded eagerly; each command's module is imported when that
 * command runs, so `sflow --help` starts fast.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { SflowError } from '../util/sflow-error.js';
import { didYouMean } from '../config/errors.js';
import { reportError } from './errors.js';
import { VERSION, versionText } from './version.js';
import { addBackendFlags } from './backend-flags.js';
import { registerSetupCommands } from './setup-commands.js';
import { registerResultsCommands } from './results-commands.js';
import { PACKAGE_NAME } from '../util/package-name.js';
import { installConsoleGuards } from '../util/console-loss.js';

const DOCS = `Docs: README.md and docs/recipes.md in the ${PACKAGE_NAME} package folder (sflow --version names it)`;

/** Repeatable options: no default array given to commander (its --help would print "(default: [])"). */
function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function fileOptions(cmd: Command, defaultFile = true): Command {
  return cmd
    .argument('[files...]', 'recipe files (merged in order, before -f files)')
    .option(
      '-f, --file <path>',
      `recipe file, repeatable${defaultFile ? ' (default: sflow.yaml)' : ''}`,
      collect,
    )
    .option(
      '-s, --set <NAME=VALUE>',
      'override a declared top-level variable (a JSON list sweeps its domain)',
      collect,
    )
    .option('-a, --artifact <NAME=URI>', 'override a declared artifact URI', collect)
    .option(
      '-M, --missable-tasks <pattern>',
      'tolerate references to tasks absent from the composition (name or glob)',
      collect,
    );
}

/** `--ssh` and its companions (spec cli.md §9.1, §9.8); `tty`: whether --ssh-tty applies. */
function sshOptions(cmd: Command, tty = true): Command {
  cmd
    .option('--ssh <destination and ssh options>', "run on an SSH host, e.g. 'user@login -p 22 -J bastion'")
    .option('--ssh-remote-root <path>', 'remote cache and work folder (default: ~/.sflow/remote)')
    .addOption(
      new Option('--ssh-follow <mode>', 'how to follow the remote run')
        .choices(['auto', 'logs', 'status', 'none'])
        .default('auto'),
    )
    .addOption(
      new Option('--ssh-fetch <what>', 'what to copy back at the end')
        .choices(['logs', 'all', 'none'])
        .default('logs'),
    );
  if (tty)
    cmd.addOption(
      new Option('--ssh-tty <when>', 'remote terminal for following')
        .choices(['auto', 'always', 'never'])
        .default('auto'),
    );
  return cmd;
}

/** `error: unknown option '--x'` → `✗ Usage error: unknown option '--x'` */
export function usageShape(text: string): string {
  return text.replace(/^error: /, '✗ Usage error: ');
}

/** `sflow` alone, `sflow --version`, and an unknown command word */
function rootAction(program: Command): void {
  program.action((opts: { version?: boolean }) => {
    if (opts.version) {
      process.stdout.write(versionText() + '\n');
      return;
    }
    // `sflow bogus`
    if (program.args.length > 0) {
      const word = program.args[0];
      const near = didYouMean(
        word,
        program.commands.map((c) => c.name()),
      );
      program.error(`error: unknown command '${word}'${near ? ` (${near})` : ''}`, {
        code: 'commander.unknownCommand',
        exitCode: 2,
      });
    }
    // `sflow` alone: help, and the usage-error exit code of a missing command (spec cli.md §9.0)
    program.outputHelp();
    process.exitCode = 2;
  });
}

/** `sflow run` (its backend flags are added from the registry when it runs: backend-flags.ts) */
function addRunCommand(program: Command): void {
  const run = fileOptions(program.command('run').description('run a workflow (or plan it with --dry-run)'))
    .option('--dry-run', 'plan only: print the plan (placement, GPUs, exact commands) and create nothing')
    .option('--tui', 'full-screen live view (ignored with --dry-run)')
    .option('--tui-refresh <fps>', 'live view refreshes per second, 1–30 (default 4)', (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 30)
        throw new InvalidArgumentError('expected an integer from 1 to 30');
      return n;
    })
    .option('--workspace-dir <dir>', 'base for relative artifact paths and the default output root')
    .option('--output-dir <dir>', 'output root (default: <workspace>/sflow_output)')
    .addOption(
      new Option('--log-level <level>', 'driver log level')
        .choices(['debug', 'info', 'warning', 'error', 'critical'])
        .default('info'),
    )
    .option('--skip-artifact-check', 'missing fs:// artifact paths warn instead of failing')
    .option('--wait-for-gpus <seconds>', 'wait for free GPUs (0 = forever) instead of failing fast')
    .option('--enable-workflow-monitor', 'add a default workflow monitor')
    .option(
      '--enable-task-monitor <tasks>',
      'add a default monitor to these tasks (comma separated, repeatable)',
      collect,
    )
    .option('-v, --verbose', 'more detail in sflow.log (same as --log-level debug)')
    .option(
      '--resume <run-dir>',
      'run again only what did not complete in that run (and what depends on it), in the same folder',
    )
    .option('--force', 'with --resume: go on although the recipe or its variables changed')
    .option(
      '--secret-file <NAME=PATH>',
      'a secret variable from a file, kept off command lines (repeatable; or SFLOW_SECRET_<NAME>)',
      collect,
    );
  run.addHelpText('after', `\n${DOCS}`).action(async (files: string[], opts: Record<string, unknown>) => {
    if (opts.ssh !== undefined) {
      const { sshCommand } = await import('./remote-run.js');
      process.exitCode = await sshCommand('run', files, opts);
      return;
    }
    const { runCommand } = await import('./run.js');
    process.exitCode = await runCommand(files, opts);
    exitAfterRun();
  });
}

/** `sflow batch` (Slurm, through the backend registry's batch scheduler) */
function addBatchCommand(program: Command): void {
  fileOptions(
    program
      .command('batch')
      .description('write (and --submit) an sbatch script that runs the workflow as a Slurm job'),
  )
    .option(
      '-p, --partition <name>',
      "sbatch partition (default: the recipe's slurm backend, else the default partition sinfo lists)",
    )
    .option(
      '-A, --account <name>',
      "sbatch account (default: the recipe's slurm backend, else your association in sacctmgr)",
    )
    .option('--time <HH:MM:SS>', "#SBATCH --time (default: the recipe's slurm backend time)")
    .option(
      '-N, --nodes <n>',
      "#SBATCH --nodes and the job's plan (default: the recipe's slurm backend nodes)",
    )
    .option('-G, --gpus-per-node <n>', 'GPUs per node the job plans with (never an #SBATCH GPU line: use -e)')
    .option(
      '-J, --job-name <name>',
      "#SBATCH --job-name (default: the recipe's slurm backend job_name, else sflow)",
    )
    .option(
      '-e, --sbatch-extra-args <arg>',
      "one verbatim #SBATCH line each, after the recipe backend's extra_args (repeatable)",
      collect,
    )
    .option('-O, --sbatch-output <pattern>', '#SBATCH --output (default: ./sflow_output/%j-sflow-submit.out)')
    .option('-E, --sbatch-error <pattern>', '#SBATCH --error (default: ./sflow_output/%j-sflow-submit.err)')
    .option(
      '-o, --sbatch-path <file>',
      'write the script here (mode 755) and the composed recipe beside it, which the job runs',
    )
    .option('--submit', 'submit the written script(s) with sbatch')
    .option('--dry-run', 'validate and print the script(s); write and submit nothing')
    .option('-b, --bulk-input <csv>', 'one job per CSV row (into <output>/bulk_input_<time>/)')
    .option('--row <selector>', 'with --bulk-input: rows (1-based: 3, 1,4, 2:5, 1:10:2)', collect)
    .option(
      '-B, --bulk-submit <path>',
      'one job per self-contained recipe: a file, a folder (*.yaml) or a pattern (repeatable)',
      collect,
    )
    .option('-r, --resolve', 'composed recipes have their variables inlined')
    .option(
      '--secret-file <NAME=PATH>',
      'a secret variable from a file the job reads, kept off command lines (repeatable)',
      collect,
    )
    .option('--workspace-dir <dir>', 'forwarded to sflow run; the job starts there (default: cwd)')
    .option('--output-dir <dir>', 'forwarded to sflow run (default: <workspace>/sflow_output)')
    .addOption(
      new Option('--log-level <level>', 'forwarded to sflow run').choices([
        'debug',
        'info',
        'warning',
        'error',
        'critical',
      ]),
    )
    .option('--skip-artifact-check', 'forwarded to sflow run (missing fs:// paths warn)')
    .option('--enable-workflow-monitor', 'forwarded to sflow run')
    .option('--enable-task-monitor <tasks>', 'forwarded to sflow run (repeatable)', collect)
    .option(
      '--ssh <destination and ssh options>',
      "upload and sbatch on a login node, e.g. 'user@login -J bastion'",
    )
    .option(
      '--ssh-remote-root <path>',
      'remote cache and work folder, seen by the compute nodes (default: ~/.sflow/remote)',
    )
    .addHelpText('after', `\n${DOCS}`)
    .action(async (files: string[], opts: Record<string, unknown>) => {
      if (opts.ssh !== undefined) {
        const { batchSshCommand } = await import('./remote-batch.js');
        process.exitCode = await batchSshCommand(files, opts);
        return;
      }
      const { batchCommand } = await import('./batch.js');
      process.exitCode = await batchCommand(files, opts);
    });
}

/** `sflow compose` */
function addComposeCommand(program: Command): void {
  fileOptions(program.command('compose').description('merge several recipe files into one'), false)
    .option('-o, --output <path>', 'write the composed YAML here (default, or -: stdout)')
    .option('-r, --resolve', 'inline resolvable variables')
    .option('-b, --bulk-input <csv>', 'one composed recipe per CSV row (into <output>/compose_<time>/)')
    .option('--row <selector>', 'with --bulk-input: rows to compose (1-based: 3, 1,4, 2:5, 1:10:2)', collect)
    .option('--validate', 'also dry-run each composed recipe quietly (problems are warnings)')
    .addHelpText('after', `\n${DOCS}`)
    .action(async (files: string[], opts: Record<string, unknown>) => {
      if (opts.ssh !== undefined) {
        const { sshCommand } = await import('./remote-run.js');
        process.exitCode = await sshCommand('compose', files, opts);
        return;
      }
      if (opts.bulkInput) {
        const { composeBulkCommand } = await import('./compose-bulk.js');
        process.exitCode = await composeBulkCommand(files, opts);
        return;
      }
      const { composeCommand } = await import('./compose.js');
      process.exitCode = await composeCommand(files, opts);
    });
}

/** `sflow visualize` */
function addVisualizeCommand(program: Command): void {
  fileOptions(program.command('visualize').description('render the task DAG'))
    .addOption(
      new Option('--format <fmt>', "output format (default: from -o's extension, else svg)").choices([
        'mermaid',
        'dot',
        'svg',
        'png',
      ]),
    )
    .option(
      '-o, --output <path>',
      'output file; - for stdout (default: mermaid to stdout, else ./<workflow>.<ext> in the workspace dir)',
    )
    .option('--show-variables', 'include resolved variables')
    .option('--workspace-dir <dir>', 'workspace dir')
    .option('--output-dir <dir>', 'output root')
    .addHelpText('after', `\n${DOCS}`)
    .action(async (files: string[], opts: Record<string, unknown>) => {
      const { visualizeCommand } = await import('./visualize.js');
      process.exitCode = await visualizeCommand(files, opts);
    });
}

export function buildProgram(): Command {
  const program = new Command('sflow');
  program
    .description('Run one YAML GPU workflow on a workstation, Docker, Slurm or Kubernetes')
    .addHelpText('after', `\n${DOCS}`)
    .option('-V, --version', 'print the version and runtime details')
    .exitOverride()
    // commander's own errors (unknown option, bad choice, missing argument) in the one shape every
    // command uses: `✗ Usage error: …` (README, Errors); the subcommands inherit this
    .configureOutput({ outputError: (str, write) => write(usageShape(str)) });
  rootAction(program);
  addRunCommand(program);
  addBatchCommand(program);
  addComposeCommand(program);
  addVisualizeCommand(program);

  registerResultsCommands(program, DOCS);

  program
    .command('report')
    .description("rebuild a run's report.html, or compare several runs on one page")
    .argument('<run-dirs...>', 'run directories (sflow_output/<run id>)')
    .option(
      '-o, --output <path>',
      'output file, - for stdout (one run: <run dir>/report.html; several: sflow_report_compare.html)',
    )
    .addHelpText('after', `\n${DOCS}`)
    .action(async (dirs: string[], opts: Record<string, unknown>) => {
      const { reportCommand } = await import('./report.js');
      process.exitCode = await reportCommand(dirs, opts);
    });

  program
    .command('recover')
    .description('stop what runs whose driver was killed left behind, and mark them as ended')
    .argument(
      '[run-dirs...]',
      'run directories (default: every run of yours on this machine whose driver is gone)',
    )
    .option('--grace-seconds <s>', 'TERM → KILL grace for what is left', '5')
    .addHelpText('after', `\n${DOCS}`)
    .action(async (dirs: string[], opts: Record<string, unknown>) => {
      const { recoverCommand } = await import('./recover.js');
      process.exitCode = await recoverCommand(dirs, opts);
    });

  program
    .command('watch')
    .description('follow an --ssh run again: its logs every 5 s until it ends')
    .argument('<receipt>', 'the receipt.json that run --ssh wrote')
    .option('--once', 'print one snapshot and exit')
    .addHelpText('after', `\n${DOCS}`)
    .action(async (receipt: string, opts: Record<string, unknown>) => {
      const { watchCommand } = await import('./watch.js');
      process.exitCode = await watchCommand(receipt, opts);
    });

  program
    .command('fetch')
    .description("copy an --ssh run's files here (what exists so far)")
    .argument('<receipt>', 'the receipt.json that run --ssh wrote')
    .option('--all', 'the whole output, not only the logs')
    .option('-o, --output-dir <dir>', "destination (default: the receipt's local folder)")
    .addHelpText('after', `\n${DOCS}`)
    .action(async (receipt: string, opts: Record<string, unknown>) => {
      const { fetchCommand } = await import('./fetch.js');
      process.exitCode = await fetchCommand(receipt, opts);
    });

  program
    .command('schema')
    .description('print the JSON Schema of recipes (for editor completion)')
    .option('-o, --output <path>', 'write to a file instead of stdout (-: stdout)')
    .addHelpText('after', `\n${DOCS}`)
    .action(async (opts: Record<string, unknown>) => {
      const { schemaCommand } = await import('./schema.js');
      process.exitCode = await schemaCommand(opts);
    });
  registerSetupCommands(program, DOCS);
  // --ssh on run and compose (batch too, once it exists)
  sshOptions(program.commands.find((c) => c.name() === 'run')!);
  sshOptions(
    program.commands.find((c) => c.name() === 'compose')!,
    false,
  );
  // the backend types' flags of run and recover (-e, --extra-docker-args, --kube*), from the backend
  // registry, loaded only when one of those commands runs
  program.hook('preSubcommand', (_program, sub) => addBackendFlags(sub));
  // the program itself takes no arguments: extra words reach its action as an unknown command
  // (set last, so the subcommands created above keep rejecting excess arguments)
  program.allowExcessArguments(true);
  return program;
}

/**
 * `ownsProcess: false` when sflow runs inside another program's process (the in-process test
 * helper): it then never ends that process itself.
 */
export async function main(argv: string[], o: { ownsProcess?: boolean } = {}): Promise<void> {
  ownsProcess = o.ownsProcess !== false;
  // `sflow schema | head`: a reader that goes away is not an error; during a run it only silences
  // the console (util/console-loss.ts)
  installConsoleGuards();
  // the remote end of --ssh (the same sflow version on both ends): an internal protocol, not a command
  if (argv[2] === 'remote-agent') {
    const { remoteAgent } = await import('../remote/agent/cli.js');
    process.exitCode = await remoteAgent(argv[3] ?? '', argv[4] ?? '', argv.slice(5));
    return;
  }
  const program = buildProgram();
  // all of `sflow batch` where a build has no batch command is refused by name, not as unknown
  if (argv[2] === 'batch' && !program.commands.some((c) => c.name() === 'batch')) {
    process.exitCode = reportError(
      new SflowError('cli.not_yet', "'batch' is not in this version", {
        phase: 'limitation',
        hint: 'use sflow run (or sflow run --ssh <host>)',
      }),
    );
    return;
  }
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      if (
        e.code === 'commander.helpDisplayed' ||
        e.code === 'commander.version' ||
        e.code === 'commander.help'
      ) {
        process.exitCode = 0;
        return;
      }
      process.exitCode = e.exitCode === 0 ? 0 : 2;
      return;
    }
    const { reportError } = await import('./errors.js');
    process.exitCode = reportError(e);
  }
}

export { VERSION };

/**
 * The run is over (summary, report and exit code written): a connection an unanswering server left
 * open (a request past its bound that the HTTP client never closed) must not keep the driver
 * alive. The timer does not hold the event loop itself: a clean driver exits at once as before.
 */
let ownsProcess = true;

function exitAfterRun(): void {
  if (!ownsProcess) return;
  setTimeout(() => process.exit(process.exitCode ?? 0), 10_000).unref();
}
