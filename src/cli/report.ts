/**
 * `sflow report <run-dir>… [-o file]`: rebuilds a run's `report.html` from its ledger, or, with
 * several run directories, one page comparing them (default `sflow_report_compare.html` here).
 */
import { existsSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SflowError } from '../config/errors.js';
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
    const out = typeof opts.output === 'string' ? resolve(opts.output) : undefined;
    const { loadRun, writeRunReport } = await import('../report/load.js');
    if (dirs.length === 1) {
      process.stdout.write(`✓ Saved to ${writeRunReport(dirs[0], out)}\n`);
      return 0;
    }
    const { renderComparison } = await import('../report/compare.js');
    const file = out ?? resolve('sflow_report_compare.html');
    const html = renderComparison(
      dirs.map((d) => ({ input: loadRun(d), dir: resolve(d) })),
      file,
    );
    writeFileSync(`${file}.tmp`, html);
    renameSync(`${file}.tmp`, file);
    process.stdout.write(`✓ Saved to ${file} (${dirs.length} runs)\n`);
    return 0;
  } catch (e) {
    return reportError(e);
  }
}
