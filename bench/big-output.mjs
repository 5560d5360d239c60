// `sflow run` end to end on the output-heavy recipes of BENCHMARKS.md: 200 MB of lines and one
// 50 MB line without a newline (goals: ≤ 5 s and ≤ 2 s, driver RSS < 150 MiB, log byte-exact),
// against the same commands without sflow. Console not a TTY (task output goes to the logs only).
// With `script` (util-linux) also 200 MB with a terminal attached (a pty whose reader is `script`
// copying to /dev/null; the console then echoes task output, sampled when it falls behind), against
// the same command to a file and to the same kind of pty. The direct copy writes to a file, as
// sflow writes the task's log.
// Run: node bench/big-output.mjs      (RUNS=5 by default)
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { BIN, fmt, scratch, single, timeCommand, timeSflow } from './lib.mjs';

const runs = Number(process.env.RUNS ?? 5);
const dir = scratch();
const cases = [
  ['200 MB of task output', 'out200mb', 'yes 0123456789abcdef | head -c 200000000'],
  ['one 50 MB line, no newline', 'line50mb', "head -c 50000000 /dev/zero | tr '\\0' a"],
];
console.log('| case | sflow run (median) | driver peak RSS | same command without sflow, to a file |');
console.log('|---|---|---|---|');
for (const [label, name, cmd] of cases) {
  const r = timeSflow(['run', '-f', single(dir, name, cmd)], { runs, cwd: dir });
  const base = timeCommand('bash', ['-c', `${cmd} > ${dir}/direct.out`], { runs });
  console.log(
    `| ${label} | ${fmt(r.wall)} s (×${fmt(r.wall / base, 2)}) | ${fmt(r.rssMiB, 0)} MiB | ${fmt(base)} s |`,
  );
}

if (spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0) {
  const [, name, cmd] = cases[0];
  const file = single(dir, `${name}tty`, cmd);
  const tty = (line) => timeCommand('script', ['-qec', line, '/dev/null'], { runs });
  const r = tty(`cd ${dir} && ${process.execPath} ${BIN} run -f ${file}`);
  const base = timeCommand('bash', ['-c', `${cmd} > ${dir}/direct.out`], { runs });
  const direct = tty(cmd);
  console.log(
    `| 200 MB, terminal attached | ${fmt(r)} s (×${fmt(r / base, 2)} the direct copy) | — | ` +
      `${fmt(base)} s to a file; ${fmt(direct)} s to the terminal |`,
  );
}
rmSync(dir, { recursive: true, force: true });
