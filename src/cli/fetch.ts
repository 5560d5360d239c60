/**
 * `sflow fetch RECEIPT [--all] [-o DIR]` (spec cli.md §9.8): copy what an `--ssh` run has written
 * so far (repeatable). Default set per the receipt's command (run → logs, compose → all); `--all`
 * copies the whole output; `-o` overrides the receipt's local folder.
 */
import { resolve } from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { reportError } from './errors.js';
import { readReceipt } from '../remote/receipt.js';
import { parseSshTarget } from '../remote/ssh-target.js';
import { fetchOutput } from '../remote/transfer.js';

export async function fetchCommand(receiptPath: string, opts: Record<string, unknown>): Promise<number> {
  try {
    const receipt = readReceipt(receiptPath);
    const dest = (opts.outputDir as string | undefined) ?? receipt.local_output;
    if (!dest)
      throw new SflowError('remote.receipt', `${receiptPath} names no local folder: give one with -o DIR`, {
        phase: 'usage',
        exitCode: 2,
      });
    const mode = opts.all || receipt.command === 'compose' ? 'all' : 'logs';
    const t = parseSshTarget(receipt.connection);
    await fetchOutput(t, receipt.remote_sflow, receipt.remote_session, mode, resolve(dest));
    process.stdout.write(`Fetched remote output to ${resolve(dest)}\n`);
    return 0;
  } catch (e) {
    return reportError(e, 'SSH error');
  }
}
