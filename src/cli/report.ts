/**
 * `sflow report <run-dir>… [-o file]`: rebuilds a run's `report.html` from its ledger, or, with
 * several run directories, one page comparing them (default `sflow_report_compare.html` here).
 */
import { existsSync, statSync } from 'node:fs';
import { writeOutput } from '../outputs/write-output.js';
import { resolve } from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { reportError } from './errors.js';

export async function reportCommand(dirs: string[], opts: Record<string, unknown>): Promise<number> {
  try {
    if (dirs.length === 0)
      throw new SflowError('cli.report_no_dir', 'no run directory given', {
        phase: 'usage',
        hint: 'sflow report sflow_output/<run id> [more run dirs…] [-o report.html]',
        exitCode: 2,
      });
    for (const d of dirs) {
      if (!existsSync(d) || !statSync(d).isDirectory() || !existsSync(resolve(d, 'events.jsonl')))
        throw new SflowError('cli.report_not_run_dir', `${d}: not an sflow run directory (no events.jsonl)`, {
          phase: 'usage',
          hint: 'pass a folder under sflow_output/, e.g. sflow_output/<workflow>-<date>-<id>',
          exitCode: 2,
        });
    }
    const given = typeof opts.output === 'string' ? opts.output : undefined;
    const { loadRun, writeRunReport } = await import('../report/load.js');
    if (dirs.length === 1 && given === undefined) {
      process.stdout.write(`✓ Saved to ${writeRunReport(dirs[0])}\n`);
      return 0;
    }
    let html: string;
    if (dirs.length === 1) {
      const { renderReport } = await import('../report/page.js');
      html = renderReport(loadRun(dirs[0]));
    } else {
      const { renderComparison } = await import('../report/compare.js');
      html = renderComparison(
        dirs.map((d) => ({ input: loadRun(d), dir: resolve(d) })),
        resolve(given !== undefined && given !== '-' ? given : 'sflow_report_compare.html'),
      );
    }
    // `-o -`: the page on stdout
    if (given === '-') {
      process.stdout.write(html);
      return 0;
    }
    const file = writeOutput(given ?? 'sflow_report_compare.html', html, { atomic: true });
    process.stdout.write(`✓ Saved to ${file}${dirs.length > 1 ? ` (${dirs.length} runs)` : ''}\n`);
    return 0;
  } catch (e) {
    return reportError(e);
  }
}
