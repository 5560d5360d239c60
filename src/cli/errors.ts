/** One place that prints errors: user errors without a stack, bugs with one. */
import { formatSflowError, isSflowError } from '../util/sflow-error.js';

export function reportError(e: unknown, prefix = 'Configuration error'): number {
  if (isSflowError(e)) {
    const label =
      e.phase === 'run'
        ? 'Workflow failed'
        : e.phase === 'usage'
          ? 'Usage error'
          : e.phase === 'limitation'
            ? 'Not supported in this version'
            : prefix;
    process.stderr.write(`✗ ${label}: ${formatSflowError(e)}\n`);
    return e.exitCode;
  }
  process.stderr.write(
    `✗ Internal error (this is a bug in sflow, please report it):\n${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
  );
  return 1;
}
