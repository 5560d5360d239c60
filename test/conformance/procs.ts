/** Looking at this machine's processes, and polling with a deadline, for the conformance suites. */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** pids of live (non-zombie) processes for which `match(pid)` holds (it may throw: not a match) */
function liveProcesses(match: (pid: string) => boolean): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!match(name)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') out.push(Number(name));
    } catch {
      // exited while we looked, or not ours to read
    }
  }
  return out;
}

/** pids of live (non-zombie) processes whose command line contains `marker` */
export function processesWith(marker: string): number[] {
  return liveProcesses((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(marker));
}

/** pids of live processes whose working directory is `cwd` (a driver started there, say) */
export function processesIn(cwd: string): number[] {
  return liveProcesses((pid) => readlinkSync(`/proc/${pid}/cwd`) === cwd);
}

export async function until<T>(fn: () => T | undefined | false, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (let delay = 5; ; delay = Math.min(delay * 2, 50)) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(delay);
  }
}

/** `until` for an asynchronous check (an engine call): polled every 250 ms until it holds or `ms` ran out */
export async function untilAsync<T>(
  fn: () => Promise<T | undefined | false>,
  ms: number,
  what: string,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(250);
  }
}
