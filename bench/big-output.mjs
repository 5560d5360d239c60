// `sflow run` end to end on the output-heavy recipes of BENCHMARKS.md: 200 MB of lines and one
// 50 MB line without a newline (goals: ≤ 5 s and ≤ 2 s, driver RSS < 150 MiB, log byte-exact),
// against the same commands without sflow. Console not a TTY (task output goes to the logs only).
// Run: node bench/big-output.mjs      (RUNS=5 by default)
import { fmt, scratch, single, timeCommand, timeSflow } from './lib.mjs';

const runs = Number(process.env.RUNS ?? 5);
const dir = scratch();
const cases = [
  ['200 MB of task output', 'out200mb', 'yes 0123456789abcdef | head -c 200000000'],
  ['one 50 MB line, no newline', 'line50mb', "head -c 50000000 /dev/zero | tr '\\0' a"],
];
console.log('| case | sflow run (median) | driver peak RSS | same command without sflow |');
console.log('|---|---|---|---|');
for (const [label, name, cmd] of cases) {
  const r = timeSflow(['run', '-f', single(dir, name, cmd)], { runs, cwd: dir });
  const base = timeCommand('bash', ['-c', `${cmd} > /dev/null`], { runs });
  console.log(`| ${label} | ${fmt(r.wall)} s | ${fmt(r.rssMiB, 0)} MiB | ${fmt(base)} s |`);
}
