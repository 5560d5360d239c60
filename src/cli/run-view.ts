/**
 * What the user watches during `sflow run`: the console view, or with `--tui` on an interactive
 * terminal the full-screen live view (loaded only then); plus the event-loop stall watchdog.
 * Both are consumers of the run's event stream, chosen here at the composition root.
 */
import { LoopStallWatchdog } from '../reporters/loop-stalls.js';
import type { RunEvent } from '../events/events.js';
import { onConsoleLost } from '../util/console-loss.js';

export interface RunView {
  /** the plain console reporter should run */
  console: boolean;
  emit(e: RunEvent): void;
  /** after the run: the TUI waits for `q`, restores the terminal and prints the verdict */
  finish(r: { status: string; exitCode: number; message: string; runDir: string }): Promise<number>;
}

/** Hands a stop request to the run's SIGINT handler, exactly as a Ctrl-C would. */
function stopLikeCtrlC(): boolean {
  if (process.listenerCount('SIGINT') === 0) return false;
  process.emit('SIGINT', 'SIGINT');
  return true;
}

export async function openRunView(opts: Record<string, unknown>): Promise<RunView> {
  const wantTui = Boolean(opts.tui);
  const tty = Boolean(process.stdout.isTTY);
  if (wantTui && !tty)
    process.stderr.write('ℹ --tui needs an interactive terminal; showing the console view instead\n');
  if (!wantTui || !tty) {
    const watchdog = new LoopStallWatchdog({ warn: (m) => process.stderr.write(`⚠ ${m}\n`) });
    return {
      console: true,
      emit: (e) => watchdog.emit(e),
      finish: async (r) => r.exitCode,
    };
  }
  const { withoutCiMarkers } = await import('../reporters/tui/ci-env.js');
  const { startTui } = await withoutCiMarkers(() => import('../reporters/tui/index.js'));
  const fps = Number(opts.tuiRefresh ?? 4);
  const tui = startTui({ requestStop: stopLikeCtrlC, fps: Number.isFinite(fps) ? fps : 4 });
  // a terminal that hung up cannot answer `q`: the view leaves on its own when the run ends
  onConsoleLost(() => tui.consoleGone());
  const warnings: string[] = [];
  const watchdog = new LoopStallWatchdog({
    warn: (m) => {
      warnings.push(m);
      tui.notice(m);
    },
  });
  return {
    console: false,
    emit: (e) => {
      if (e.type === 'log' && (e.level === 'warning' || e.level === 'error')) warnings.push(e.message);
      watchdog.emit(e);
      tui.emit(e);
    },
    async finish(r) {
      await tui.waitForQuit();
      await tui.close();
      const shown = [...new Set(warnings)];
      for (const w of shown.slice(0, 10)) process.stderr.write(`⚠ ${w}\n`);
      if (shown.length > 10) process.stderr.write(`⚠ … ${shown.length - 10} more warning(s) in sflow.log\n`);
      if (r.status === 'COMPLETED' && r.exitCode === 0)
        process.stdout.write(`✓ Workflow completed\n  Output folder: ${r.runDir}\n`);
      else if (r.status === 'COMPLETED')
        process.stderr.write(`✗ ${r.message}\n  Output folder: ${r.runDir}\n`);
      else if ([129, 130, 131, 143].includes(r.exitCode))
        process.stderr.write(`⚠ Workflow cancelled\n  ${r.message}\n  Output folder: ${r.runDir}\n`);
      else process.stderr.write(`✗ Workflow failed: ${r.message}\n  Output folder: ${r.runDir}\n`);
      return r.exitCode;
    },
  };
}
