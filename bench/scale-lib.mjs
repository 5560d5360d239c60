/**
 * Shared helpers of the scale benches (bench/scale-*.mjs): run `sflow` from source as its own
 * process with its peak memory sampled, read the run's events, fit a growth curve, print a table,
 * write JSON. No engine is started here.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg, tmpdir } from 'node:os';

export const root = new URL('..', import.meta.url).pathname;

/**
 * `sflow <args>` (the build: `npm run build` first) in `cwd`; resolves with exit code, wall ms,
 * peak RSS (MiB: the process's own maxRSS at exit, from bench/rss-hook.mjs, or VmHWM sampled from
 * /proc every 200 ms when it did not exit normally — sampling alone missed a peak in the last
 * moments, the report), stderr tail
 */
export function runSflow(args, { cwd, env = {}, timeoutMs = 900_000 } = {}) {
  const t0 = performance.now();
  const rssDir = mkdtempSync(join(tmpdir(), 'sflow-scale-rss-'));
  const rssFile = join(rssDir, 'rss');
  const hook = join(root, 'bench', 'rss-hook.mjs');
  const child = spawn(
    process.execPath,
    ['--trace-warnings', '--import', hook, join(root, 'bin/sflow.js'), ...args],
    {
      cwd,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, SFLOW_TASK_OUTPUT: 'never', SFLOW_BENCH_RSS_FILE: rssFile, ...env },
    },
  );
  let stderr = '';
  child.stderr.on('data', (b) => {
    stderr = (stderr + b.toString()).slice(-20_000);
  });
  let peak = 0;
  const sample = () => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
    } catch {
      /* gone */
    }
  };
  const timer = setInterval(sample, 200);
  const killer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
  const done = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      clearInterval(timer);
      clearTimeout(killer);
      let exact = 0;
      try {
        exact = Math.max(...readFileSync(rssFile, 'utf8').split('\n').filter(Boolean).map(Number)) / 1024;
      } catch {
        /* killed: the sampled figure */
      }
      rmSync(rssDir, { recursive: true, force: true });
      resolve({ code, signal, wallMs: performance.now() - t0, peakMiB: Math.max(peak, exact), stderr });
    }),
  );
  return { child, done, sample };
}

/** the newest run folder's events (NDJSON) under `cwd` */
export function runEvents(cwd) {
  const runs = join(cwd, 'sflow_output');
  if (!existsSync(runs)) return [];
  const dirs = readdirSync(runs).filter((d) => existsSync(join(runs, d, 'events.jsonl')));
  if (dirs.length === 0) return [];
  const file = join(runs, dirs.sort().at(-1), 'events.jsonl');
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** times (s from the run's first event) of allocation, first and last task start, teardown end; control calls */
export function phases(events) {
  const at = (e) => e.at ?? e.t;
  const t0 = events.length ? events[0].t : 0;
  const s = (t) => (t === undefined ? undefined : +((t - t0) / 1000).toFixed(2));
  const starts = events.filter((e) => e.type === 'task_started').map(at);
  const alloc = events.find((e) => e.type === 'backend_allocation' && e.phase === 'allocated');
  const td = events.find((e) => e.type === 'teardown' && e.phase === 'end');
  const calls = events.filter((e) => e.type === 'external_call');
  return {
    allocatedS: s(alloc?.t),
    firstStartS: s(starts.length ? starts.reduce((a, b) => Math.min(a, b)) : undefined),
    allStartedS: s(starts.length ? starts.reduce((a, b) => Math.max(a, b)) : undefined),
    teardownS: td?.elapsedMs !== undefined ? +(td.elapsedMs / 1000).toFixed(2) : undefined,
    endS: s(events.length ? events.at(-1).t : undefined),
    events: events.length,
    calls: calls.length,
    failedCalls: calls.filter((e) => !e.ok).length,
    status: events.find((e) => e.type === 'run_finished')?.status,
  };
}

/** least-squares slope and intercept of y over x; `perUnit` at the smallest and the largest size */
export function fit(xs, ys) {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
  }
  const slope = sxx ? sxy / sxx : 0;
  // log-log exponent between the first and the last point (1 = linear)
  const exp = xs.length > 1 && ys[0] > 0 ? Math.log(ys.at(-1) / ys[0]) / Math.log(xs.at(-1) / xs[0]) : NaN;
  return { slope, intercept: my - slope * mx, exponent: +exp.toFixed(2) };
}

/** marginal cost per added unit between consecutive sizes */
export function marginal(xs, ys) {
  const out = [];
  for (let i = 1; i < xs.length; i++) out.push((ys[i] - ys[i - 1]) / (xs[i] - xs[i - 1]));
  return out;
}

export function table(rows, cols) {
  const head = `| ${cols.join(' | ')} |`;
  const sep = `|${cols.map(() => '---').join('|')}|`;
  const body = rows.map(
    (r) => `| ${cols.map((c) => (r[c] === undefined ? '—' : String(r[c]))).join(' | ')} |`,
  );
  return [head, sep, ...body].join('\n');
}

export function writeJson(name, data) {
  const file = process.env.OUT ?? join(root, 'bench', `${name}.json`);
  writeFileSync(file, JSON.stringify({ machine: machine(), ...data }, null, 2) + '\n');
  return file;
}

export function machine() {
  return {
    node: process.version,
    cpus: cpuCount(),
    load: loadavg().map((l) => +l.toFixed(2)),
    at: new Date().toISOString(),
  };
}
function cpuCount() {
  try {
    return readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('processor')).length;
  } catch {
    return undefined;
  }
}
