/** Signals to a whole process group (terminate: "kill the group"). */

/** Sends `signal` to every member of the group; false when nobody is left (ESRCH). */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1) return false; // never signal init or every process
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}
