/** Whether this process is sflow's single executable (its entry, src/sea/entry.ts, sets the global). */
export function inSingleExecutable(): boolean {
  return typeof (globalThis as { __sflowSeaUrl?: unknown }).__sflowSeaUrl === 'string';
}
