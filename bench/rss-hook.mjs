// Loaded with `node --import` into the measured sflow process: at exit it appends the process's
// peak resident set size (KiB) to $SFLOW_BENCH_RSS_FILE.
import { appendFileSync } from 'node:fs';

const out = process.env.SFLOW_BENCH_RSS_FILE;
if (out) {
  process.on('exit', () => {
    appendFileSync(out, `${process.resourceUsage().maxRSS}\n`);
  });
}
