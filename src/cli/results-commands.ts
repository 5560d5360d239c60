/**
 * `sflow results collect|query|compare|diff` (docs/results.md): registration only; the actions
 * live in results.ts and load DuckDB when they run.
 */
import { Command, InvalidArgumentError, Option } from 'commander';

function repeat(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function positive(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number ≥ 0');
  return n;
}

const DIR = ['-d, --dir <folder>', 'the collected table (default: sflow_results)'] as const;

export function registerResultsCommands(program: Command, docs: string): void {
  const results = program
    .command('results')
    .description('collect run results into one table; query, compare and gate regressions (DuckDB)')
    .addHelpText('after', `\n${docs}`);
  results
    .command('collect')
    .description('add runs (run folders, output roots searched recursively, s3://bucket/prefix) to the table')
    .argument('<sources...>', 'run folders, output roots or s3:// prefixes of upload_all archives')
    .option(...DIR)
    .action(async (sources: string[], opts: Record<string, unknown>) => {
      const { collectCommand } = await import('./results.js');
      process.exitCode = await collectCommand(sources, opts);
    });
  results
    .command('query')
    .description("run SQL over the collected table (the view 'results')")
    .argument('<sql>', "e.g. 'SELECT var_BATCH, avg(duration_s) FROM results GROUP BY 1'")
    .option(...DIR)
    .addOption(new Option('--format <format>', 'output').choices(['table', 'csv', 'json']).default('table'))
    .action(async (sql: string, opts: Record<string, unknown>) => {
      const { queryCommand } = await import('./results.js');
      process.exitCode = await queryCommand(sql, opts);
    });
  results
    .command('compare')
    .description('configurations side by side: best one, Pareto front of two metrics, an HTML page')
    .argument('[sources...]', 'run folders, roots or s3:// prefixes (default: the collected table)')
    .option(...DIR)
    .option('-m, --metric <name[:max|:min]>', 'metric and its direction, repeatable (first: best by)', repeat)
    .option('--workflow <name>', 'only this workflow')
    .option('--task <name>', 'only this task (its base name)')
    .option('--html <file>', 'write a self-contained page with the front and links to each run report')
    .addOption(new Option('--format <format>', 'output').choices(['table', 'json']).default('table'))
    .action(async (sources: string[], opts: Record<string, unknown>) => {
      const { compareCommand } = await import('./results.js');
      process.exitCode = await compareCommand(sources, opts);
    });
  results
    .command('diff')
    .description('per configuration in both, change of each metric beyond its noise; exit 1 on a regression')
    .argument('<base>', 'a collected table folder, run folders root, run folder or s3:// prefix')
    .argument('<candidate>', 'the same for the candidate runs')
    .option(
      '-m, --metric <name[:max|:min]>',
      'metrics to check, repeatable (default: every numeric result)',
      repeat,
    )
    .option('-k, --spread-factor <k>', 'a change counts beyond k × the noise (MAD) (default 3)', positive)
    .option('--min-change <percent>', 'and at least this relative size, in % (default 5)', positive)
    .option('--task <name>', 'only this task (its base name)')
    .addOption(new Option('--format <format>', 'output').choices(['table', 'json']).default('table'))
    .action(async (base: string, candidate: string, opts: Record<string, unknown>) => {
      const { diffCommand } = await import('./results.js');
      process.exitCode = await diffCommand(base, candidate, opts);
    });
}
