/**
 * Task-log throughput: a task writes straight into its log (util/process-group.ts) while the
 * driver follows it (outputs/task-log.ts) and builds the capped console copy.
 *
 * Run (no build needed; Node 20):
 *   node --import ./test/fixtures/ts-loader/register.js bench/log-throughput.ts [MB] [RUNS] [LINE_MB]
 * Defaults: MB = 1024 (one run is ~1 GiB of base64 lines), RUNS = 3, LINE_MB = 50.
 *
 * Cases (median of RUNS each):
 *   baseline   the same task script with its output redirected to a file by the shell (no sflow)
 *   lines      MB of 100-column lines: the task writes the log, the tailer splits every line
 *   one-line   LINE_MB of one line without newline: log byte-exact, console line capped
 * The measured driver is this file compiled by tsc into a scratch folder and run by plain
 * `node` in a child process (so its peak RSS is that of our code, not of the TypeScript
 * loader). Every run checks the log's size and sha256 against what the task produced (the
 * task hashes its own output through `tee >(sha256sum)`, in the baseline too; the log is
 * hashed by `sha256sum` afterwards, outside the timing). sflow's time runs from the tailer's
 * start to its close (all output read and split), after the task exited.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { tailLog } from '../src/outputs/task-log.js';
import { spawnGroup } from '../src/util/process-group.js';

const entry = process.argv.indexOf('--driver');
const MB = Number(process.argv[2] ?? 1024);
const RUNS = Number(process.argv[3] ?? 3);
const LINE_MB = Number(process.argv[4] ?? 50);
const root = entry < 0 ? mkdtempSync(join(os.tmpdir(), 'sflow-bench-log-')) : '';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let seq = 0;

// raw bytes such that base64 -w 100 yields about MB MiB
const linesGen = `head -c ${Math.round((MB * 1024 * 1024 * 100) / 101 / 4) * 3} /dev/urandom | base64 -w 100`;
const oneLineGen = `head -c ${LINE_MB * 1024 * 1024} /dev/zero | tr '\\0' x`;

/** The task: the generator, hashing its own output on the side. */
function taskScript(gen: string, hashFile: string): string {
  return `set -o pipefail; ${gen} | tee >(sha256sum > "${hashFile}")`;
}

function sha256File(path: string): string {
  const r = spawnSync('sha256sum', [path], { encoding: 'utf8' });
  return r.stdout.split(' ')[0];
}

/** The same task script, its output redirected to a file by the shell: no sflow at all. */
function baseline(gen: string): number {
  const out = join(root, `base${++seq}.out`);
  const t0 = performance.now();
  spawnSync('bash', ['-c', `${taskScript(gen, `${out}.sha`)} > "${out}"`], { stdio: 'inherit' });
  rmSync(`${out}.sha`, { force: true });
  const ms = performance.now() - t0;
  rmSync(out, { force: true });
  return ms;
}

interface DriverResult {
  ms: number;
  size: number;
  lines: number;
  first: string;
  tailed: boolean;
  rssMiB: number;
}

/** The measured driver (child process): run the task, follow its log, report as JSON. */
async function driver(script: string, log: string): Promise<void> {
  writeFileSync(log, '');
  let lines = 0;
  let first = '';
  const t0 = performance.now();
  const tailer = tailLog({
    path: log,
    task: 'bench',
    onLine: (l) => {
      if (lines++ === 0) first = l.line;
    },
  });
  const h = await spawnGroup({ argv: ['bash', '-c', script], logPath: log });
  const exit = await h.exited;
  await tailer.close();
  const ms = performance.now() - t0;
  if (exit.code !== 0) throw new Error(`task failed: ${JSON.stringify(exit)}`);
  const size = statSync(log).size;
  const r: DriverResult = {
    ms,
    size,
    lines,
    first,
    tailed: tailer.offset === size,
    rssMiB: process.resourceUsage().maxRSS / 1024,
  };
  process.stdout.write(JSON.stringify(r) + '\n');
}

let compiled: string | undefined;
/** tsc this file (and what it imports) into the scratch folder, once. */
function compileDriver(): string {
  if (compiled) return compiled;
  const out = join(root, 'js');
  const tsc = join(process.cwd(), 'node_modules', 'typescript', 'bin', 'tsc');
  const args = [
    '--ignoreConfig',
    '--outDir',
    out,
    '--rootDir',
    '.',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
  ];
  args.push('--target', 'es2022', '--skipLibCheck', '--types', 'node', 'bench/log-throughput.ts');
  const r = spawnSync(process.execPath, [tsc, ...args], { encoding: 'utf8' });
  compiled = join(out, 'bench', 'log-throughput.js');
  if (!existsSync(compiled)) throw new Error(`tsc failed:\n${r.stdout}${r.stderr}`);
  writeFileSync(join(out, 'package.json'), '{"type":"module"}\n');
  return compiled;
}

async function throughSflow(gen: string) {
  const n = ++seq;
  const log = join(root, `task${n}.log`);
  const hashFile = join(root, `task${n}.sha`);
  const child = spawnSync(process.execPath, [compileDriver(), '--driver', taskScript(gen, hashFile), log], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (child.status !== 0) throw new Error(`driver failed (${child.status})`);
  const r = JSON.parse(child.stdout) as DriverResult;
  // tee's process substitution may finish a moment after bash
  const end = Date.now() + 10_000;
  while (Date.now() < end && !readFileSync(hashFile, 'utf8').includes(' '))
    await new Promise((res) => setTimeout(res, 20));
  const exact = r.size > 0 && sha256File(log) === readFileSync(hashFile, 'utf8').split(' ')[0];
  rmSync(log, { force: true });
  return { ...r, exact };
}

async function main() {
  console.log(
    `machine: ${os.cpus().length} CPU × ${os.cpus()[0]?.model ?? '?'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
  );
  const results: string[] = [];
  for (const [name, gen] of [
    ['lines', linesGen],
    ['one-line', oneLineGen],
  ] as const) {
    const base: number[] = [];
    const ours: number[] = [];
    const rss: number[] = [];
    let last: Awaited<ReturnType<typeof throughSflow>> | undefined;
    for (let i = 0; i < RUNS; i++) {
      base.push(baseline(gen));
      last = await throughSflow(gen);
      ours.push(last.ms);
      rss.push(last.rssMiB);
      if (!last.exact || !last.tailed) throw new Error(`${name}: log not byte-exact or not fully tailed`);
    }
    const r = last!;
    const mib = (r.size / 2 ** 20).toFixed(0);
    const extra =
      name === 'one-line'
        ? `console line ${r.first.length} chars (${r.lines} line)`
        : `${r.lines} console lines`;
    results.push(
      `${name.padEnd(9)} ${mib} MiB: sflow ${(median(ours) / 1000).toFixed(2)} s, ` +
        `baseline ${(median(base) / 1000).toFixed(2)} s (×${(median(ours) / median(base)).toFixed(2)}), ` +
        `driver peak RSS ${Math.max(...rss).toFixed(0)} MiB, log byte-exact, ${extra}`,
    );
    console.log(results.at(-1));
  }
}

(entry >= 0 ? driver(process.argv[entry + 1], process.argv[entry + 2]) : main())
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(() => {
    if (entry < 0) rmSync(root, { recursive: true, force: true });
  });
