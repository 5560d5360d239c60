/**
 * `sflow watch RECEIPT [--once]` (spec cli.md §9.8): reconnect to an `--ssh` run and follow its
 * logs — every 5 s a snapshot of sflow_summary.log and the two most recently changed logs — until
 * the run ends (then the receipt records its state) or Ctrl-C (`Stopped watching; the remote run
 * was not cancelled.`, exit 130). Reads only the run's files; never asks a scheduler. `--once`
 * prints one snapshot. Exit code: ssh's (255 with the connection advice), else 0.
 */
import { reportError } from './errors.js';
import { readReceipt, updateReceipt } from '../remote/receipt.js';
import { parseSshTarget } from '../remote/ssh-target.js';
import { killAllSsh, sshCall, sshFailure } from '../remote/ssh-call.js';
import { agentCommand } from '../remote/transfer.js';
import { followRemote, terminalLine } from '../remote/follow-local.js';
import { parseEndLine } from '../remote/session-layout.js';

export async function watchCommand(receiptPath: string, opts: Record<string, unknown>): Promise<number> {
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    killAllSsh();
  };
  try {
    const receipt = readReceipt(receiptPath);
    const t = parseSshTarget(receipt.connection);
    if (opts.once) {
      const r = await sshCall(t, agentCommand(receipt.remote_sflow, 'snapshot', receipt.remote_session), {
        timeoutMs: 60_000,
        what: 'reading the run',
      });
      if (r.code !== 0 || r.timedOut) {
        reportError(sshFailure(t, r, 'reading the run'), 'SSH error');
        return r.code === 255 ? 255 : 1;
      }
      let end;
      for (const line of r.stdout.split('\n')) {
        const e = parseEndLine(line);
        if (e) end = e;
        else if (line) process.stdout.write(terminalLine(line + '\n'));
      }
      process.stdout.write(end ? `remote run ${end.state} (exit ${end.code})\n` : 'remote run: running\n');
      if (end && receipt.state !== end.state) updateReceipt(receiptPath, receipt, end.state, end.code);
      return 0;
    }
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const f = await followRemote(t, receipt.remote_sflow, receipt.remote_session, 'logs', false);
    if (interrupted) {
      process.stderr.write('Stopped watching; the remote run was not cancelled.\n');
      return 130;
    }
    if (f.end) {
      updateReceipt(receiptPath, receipt, f.end.state, f.end.code);
      process.stdout.write(`remote run ${f.end.state} (exit ${f.end.code})\n`);
      return 0;
    }
    reportError(sshFailure(t, f.ssh, 'following the run'), 'SSH error');
    return f.ssh.code === 255 ? 255 : 1;
  } catch (e) {
    return reportError(e, 'SSH error');
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
