/**
 * Live-view responsiveness: how long a key press takes to show on screen while the run engine is
 * busy. The real engine (executePlan, local backend, every file sink) runs a hand-built Plan; the
 * real TUI (startTui) draws into an in-memory 120×40 terminal; keys are written to its stdin and
 * the latency is the time until the first frame that shows their effect.
 *
 * Run (no build needed; Node 20):
 *   node --import ./test/fixtures/ts-loader/register.js bench/tui-responsiveness.ts [TASKS] [MB]
 * Defaults: TASKS = 2000 independent `true` tasks; MB = 200 (one task writing MB megabytes of
 * 100-character lines while the view follows its log). Prints latency percentiles; writes nothing
 * outside $TMPDIR.
 *
 * Case `tasks`: g / G (first / last task) alternately every 250 ms; the frame must show the
 * selection marker on t0000 / the last task. Case `burst`: f (pause / follow) every 50 ms; the
 * frame must show "— paused" / "— following".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { PassThrough, Writable } from 'node:stream';
import { executePlan } from '../src/cli/run-execute.js';
import { withoutCiMarkers } from '../src/reporters/tui/ci-env.js';
import { buildPlan, type SimpleTask } from '../test/integration/runtime-plan.js';

// React's production build, as in the bundled CLI
process.env.NODE_ENV = 'production';
const TASKS = Number(process.argv[2] ?? 2000);
const MB = Number(process.argv[3] ?? 200);
const root = mkdtempSync(join(os.tmpdir(), 'sflow-bench-tui-'));

interface Probe {
  key: string;
  pattern: RegExp;
}

class Terminal extends Writable {
  isTTY = true;
  columns = 120;
  rows = 40;
  frames = 0;
  onFrame: (text: string) => void = () => undefined;
  override _write(chunk: Buffer, _enc: string, cb: () => void): void {
    this.frames++;
    this.onFrame(chunk.toString());
    cb();
  }
}

function keyboard(): NodeJS.ReadStream {
  const s = new PassThrough() as unknown as NodeJS.ReadStream & { setRawMode: (b: boolean) => unknown };
  Object.assign(s, { isTTY: true, setRawMode: () => s, ref: () => s, unref: () => s });
  return s;
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

async function measure(name: string, tasks: SimpleTask[], probes: Probe[], everyMs: number): Promise<void> {
  const { startTui } = await withoutCiMarkers(() => import('../src/reporters/tui/index.js'));
  const stdout = new Terminal();
  const stdin = keyboard();
  const latencies: number[] = [];
  let pending: { since: number; pattern: RegExp } | undefined;
  stdout.onFrame = (text) => {
    if (pending && pending.pattern.test(text)) {
      latencies.push(performance.now() - pending.since);
      pending = undefined;
    }
  };
  const tui = startTui({
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin,
    requestStop: () => false,
    alternateScreen: false,
  });
  let missed = 0;
  let i = 0;
  const presser = setInterval(() => {
    if (pending) {
      if (performance.now() - pending.since < 5000) return;
      missed++;
    }
    const p = probes[i++ % probes.length];
    pending = { since: performance.now(), pattern: p.pattern };
    stdin.write(p.key);
  }, everyMs);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const runDir = join(root, name);
  const t0 = performance.now();
  const r = await executePlan(buildPlan(runDir, tasks, name), {
    cwd: root,
    console: false,
    onEvent: (e) => tui.emit(e),
  });
  const wall = performance.now() - t0;
  clearInterval(presser);
  loop.disable();
  await tui.close();
  if (r.exitCode !== 0) throw new Error(`${name}: run failed: ${r.message}`);
  rmSync(runDir, { recursive: true, force: true });
  const f = (x: number | undefined) => (x === undefined ? 'n/a' : `${x.toFixed(1)} ms`);
  console.log(
    `${name.padEnd(7)} run ${(wall / 1000).toFixed(1)} s, ${latencies.length} key presses answered` +
      (missed ? `, ${missed} not answered within 5 s` : '') +
      ` — p50 ${f(pct(latencies, 50))}, p95 ${f(pct(latencies, 95))}, max ${f(latencies.length ? Math.max(...latencies) : undefined)};` +
      ` event-loop delay p99 ${f(loop.percentile(99) / 1e6)}, ${stdout.frames} writes to the terminal`,
  );
}

try {
  const names = Array.from({ length: TASKS }, (_, i) => `t${String(i).padStart(4, '0')}`);
  const last = names.at(-1) as string;
  await measure(
    'tasks',
    names.map((name) => ({ name, script: 'true' })),
    [
      { key: 'g', pattern: /›[^\n]{0,40}t0000\b/ },
      { key: 'G', pattern: new RegExp(`›[^\\n]{0,40}${last}\\b`) },
    ],
    250,
  );
  const lines = Math.floor((MB * 1e6) / 101);
  await measure(
    'burst',
    [
      {
        name: 'burst',
        script: `yes 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' | head -n ${lines}`,
      },
    ],
    [
      { key: 'f', pattern: /— paused/ },
      { key: 'f', pattern: /— following/ },
    ],
    50,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
