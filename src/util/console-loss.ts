/**
 * The console going away: a reader of stdout that closed its end (`sflow run … | head -1`: EPIPE),
 * or a terminal that hung up (EIO, SIGHUP from a closed window or a dropped ssh session). Losing
 * the console never loses a run: while a run holds the console (`holdConsole`), such an error only
 * silences what is left to print, the run's listeners hear it once (`onConsoleLost`: sflow.log
 * says so) and the run goes on to its normal end. Without a holder (`sflow schema | head`) the
 * process ends quietly, as before, with the exit code it has.
 */
import { closeSync } from 'node:fs';
import { isatty } from 'node:tty';

let lost: string | undefined;
let holders = 0;
let installed = false;
const listeners = new Set<(why: string) => void>();

/** why the console went away, or undefined while it is there */
export function consoleLost(): string | undefined {
  return lost;
}

/** Marks the console as gone (the first reason counts) and tells every listener once. */
export function markConsoleLost(why: string): void {
  if (lost !== undefined) return;
  lost = why;
  for (const l of [...listeners]) {
    try {
      l(why);
    } catch {
      // a listener that fails must not turn a lost console into a lost run
    }
  }
}

/** Called once when the console goes away (at once when it already has). Returns the unsubscribe. */
export function onConsoleLost(listener: (why: string) => void): () => void {
  if (lost !== undefined) {
    listener(lost);
    return () => undefined;
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** While held, a lost console does not end the process. Returns the release (idempotent). */
export function holdConsole(): () => void {
  holders++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    holders--;
  };
}

/** The descriptors 0–2 that were terminals when the process started. */
const startTerminals = [0, 1, 2].filter((fd) => isatty(fd));

/**
 * A terminal the process started on has hung up: its descriptor no longer answers as a terminal
 * (the kernel swaps a hung-up tty's file operations before it sends SIGHUP).
 */
export function terminalHungUp(fds: readonly number[] = startTerminals): boolean {
  return fds.some((fd) => !isatty(fd));
}

function streamError(name: 'stdout' | 'stderr', e: NodeJS.ErrnoException): void {
  if (e.code !== 'EPIPE' && e.code !== 'EIO') throw e;
  markConsoleLost(
    e.code === 'EPIPE' ? `${name}: its reader went away (EPIPE)` : `${name}: the terminal hung up (EIO)`,
  );
  // nothing holds the console (a command that only prints): end quietly, as `head` expects
  if (holders === 0 && e.code === 'EPIPE' && name === 'stdout') process.exit(process.exitCode ?? 0);
}

/**
 * At exit Node restores the terminal settings it found at start and aborts (SIGABRT, a core) when
 * the terminal hung up meanwhile (Node 20; fixed upstream in nodejs/node#58200). It skips a
 * descriptor that is closed, so the hung-up ones are closed first: nothing can be written there.
 */
function closeHungUpTerminals(): void {
  for (const fd of startTerminals) {
    if (isatty(fd)) continue;
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}

/** Installs the stdout/stderr error handlers once per process. */
export function installConsoleGuards(): void {
  if (installed) return;
  installed = true;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => streamError('stdout', e));
  process.stderr.on('error', (e: NodeJS.ErrnoException) => streamError('stderr', e));
  if (startTerminals.length > 0) process.on('exit', closeHungUpTerminals);
}
