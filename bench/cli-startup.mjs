// `sflow --help` start-up time and peak RSS (goal ≤ 0.15 s; the original: 0.29 s, 53 MiB),
// against `node -e 0`. Run: node bench/cli-startup.mjs   (after npm install)
import { fmt, timeCommand, timeSflow } from './lib.mjs';

const runs = Number(process.env.RUNS ?? 9);
const help = timeSflow(['--help'], { runs });
const version = timeSflow(['--version'], { runs });
const nodeFloor = timeCommand(process.execPath, ['-e', '0'], { runs });
console.log(
  `| sflow --help | ${fmt(help.wall)} s | ${fmt(help.rssMiB, 0)} MiB | node -e 0: ${fmt(nodeFloor)} s |`,
);
console.log(`| sflow --version | ${fmt(version.wall)} s | ${fmt(version.rssMiB, 0)} MiB | |`);
