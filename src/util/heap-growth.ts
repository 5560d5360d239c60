/**
 * How far V8 lets the JavaScript heap grow past what the last full collection kept. A run's driver
 * allocates steadily for every task it follows (events, handles, status answers) and much of it
 * lives just long enough to reach the old generation; with V8's default factor (up to 4× on a
 * machine with much memory) the heap of a 10,000-task run grew to 380 MB around 110 MB of live data
 * before the first full collection (bench/scale-local.mjs; docs/scale.md). At 1.25× the same run
 * stays under 300 MiB of resident memory, with no more CPU than before (the collections are
 * cheaper on a smaller heap). Only the growth factor changes, not the heap's limit: a bigger run
 * still gets all the memory it needs. Set once, before the run starts (`sflow run`, `--resume`).
 */
import { setFlagsFromString } from 'node:v8';

/** the heap may grow by this percentage of the live data before the next full collection */
export const HEAP_GROWING_PERCENT = 25;

let applied = false;

/** Applies HEAP_GROWING_PERCENT to this process (once; later calls do nothing). */
export function limitHeapGrowth(): void {
  if (applied) return;
  applied = true;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
