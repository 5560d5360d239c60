/**
 * `sflow run --tui`: the full-screen live view, a sink of the run's event stream. Loaded only
 * with --tui (ink and react stay out of every other command).
 *
 * It draws on the terminal's alternate screen, so the shell's scrollback is untouched and the
 * final verdict is printed on the normal screen afterwards. `q` / Ctrl-C call `requestStop`,
 * which the CLI wires to the same handler as a real Ctrl-C (clean teardown; a second press kills
 * at once). Once the run has ended, `q` leaves.
 */
import { render, type Instance } from 'ink';
import type { RunEvent, RunEventSink } from '../../events/events.js';
import { App } from './app.js';
import { TuiModel } from './model.js';

export interface TuiOptions {
  stdout?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
  /** frames per second for picking up changes (default 4) */
  fps?: number;
  /** stop the run as Ctrl-C would; false when nothing is listening (the run is wrapping up) */
  requestStop: () => boolean;
  /** draw on the alternate screen (default true) */
  alternateScreen?: boolean;
}

export interface TuiHandle extends RunEventSink {
  readonly model: TuiModel;
  notice(message: string): void;
  /** the terminal went away (it hung up): nobody can press `q`, so leave once the run has ended */
  consoleGone(): void;
  /** resolves when the user leaves after the run ended (at once when there is no keyboard) */
  waitForQuit(): Promise<void>;
  /** unmount and restore the terminal (idempotent) */
  close(): Promise<void>;
}

const ENTER_ALT = '\x1b[?1049h\x1b[H';
const LEAVE_ALT = '\x1b[?1049l';

export function startTui(o: TuiOptions): TuiHandle {
  const stdout = o.stdout ?? process.stdout;
  const stdin = o.stdin ?? process.stdin;
  const model = new TuiModel();
  const keyboard = Boolean(stdin.isTTY);
  const alt = o.alternateScreen ?? true;
  let quit: () => void = () => undefined;
  const quitted = new Promise<void>((r) => (quit = r));
  // asked to stop (q, or a signal from outside): leave on our own once the run has ended
  let leaveAtEnd = false;
  const onQuit = () => {
    if (model.verdict) return quit();
    leaveAtEnd = true;
    if (!o.requestStop()) model.notice('the run is finishing; it closes when done');
  };
  const restore = () => {
    if (alt) stdout.write(LEAVE_ALT);
  };
  if (alt) stdout.write(ENTER_ALT);
  process.once('exit', restore);
  const fps = Math.max(1, Math.min(o.fps ?? 4, 30));
  const instance: Instance = render(<App model={model} onQuit={onQuit} refreshMs={1000 / fps} />, {
    stdout,
    stdin,
    exitOnCtrlC: false,
    patchConsole: false,
    // the view itself re-renders only on its refresh tick and on keys; a high cap keeps keys prompt
    maxFps: 60,
  });
  let closed = false;
  // the terminal hung up: ink's last frame never drains, so its exit is not waited for
  let gone = false;
  return {
    model,
    emit: (e: RunEvent) => {
      model.emit(e);
      if (e.type === 'signal') leaveAtEnd = true;
      if (e.type === 'run_finished' && leaveAtEnd) quit();
    },
    notice: (m: string) => model.notice(m),
    consoleGone: () => {
      gone = true;
      if (model.verdict) quit();
      else leaveAtEnd = true;
    },
    waitForQuit: () => (keyboard ? quitted : Promise.resolve()),
    async close() {
      if (closed) return;
      closed = true;
      instance.unmount();
      if (!gone) await instance.waitUntilExit().catch(() => undefined);
      process.removeListener('exit', restore);
      restore();
    },
  };
}
