/**
 * Monitor report build time: 24 h of 1 s samples on one node with 8 GPUs (default GPU fields,
 * cpu, memory, disk, network), one workflow report folder.
 *
 *   node --import ./test/fixtures/ts-loader/register.js bench/monitor-report-build.ts [hours] [formats]
 *
 * Prints raw size, then wall time, CPU time (user + sys: the figure that holds on a busy machine)
 * and peak RSS of the build with `svg` only (charts, summary
 * tables, sflow_monitor.log) and with `csv,svg` (plus the long-format timeline.csv).
 */
import { createWriteStream, mkdtempSync, rmSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildMonitorReports } from '../src/monitor/reports.js';
import type { ReportFormat } from '../src/plan/monitor-config.js';

const HOURS = Number(process.argv[2] ?? 24);
const N = HOURS * 3600;
const GPUS = 8;
const T0 = 1_767_225_600_000;
const root = mkdtempSync(join(tmpdir(), 'sflow-bench-monrep-'));
const raw = join(root, 'sflow_monitor', 'raw');

async function write(name: string, gen: (i: number, ts: string) => string, header = ''): Promise<void> {
  const { mkdirSync } = await import('node:fs');
  mkdirSync(raw, { recursive: true });
  const out = createWriteStream(join(raw, name));
  if (header) out.write(header);
  let buf = '';
  for (let i = 0; i < N; i++) {
    buf += gen(i, ((T0 + i * 1000) / 1000).toFixed(3));
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once('drain', () => r()));
      buf = '';
    }
  }
  out.end(buf);
  await new Promise<void>((r) => out.once('finish', () => r()));
}

async function main(): Promise<void> {
  await write(
    'gpu_monitor_node_0_bench.log',
    (i, ts) => {
      let s = '';
      for (let g = 0; g < GPUS; g++) {
        const u = (i * 7 + g * 13) % 100;
        s += `${ts},${g},${u},${u >> 1},${40 + (u >> 2)},${45 + (u >> 3)},${(80 + u * 6).toFixed(2)},${1400 + u * 5},2619,81559,${20000 + u * 500}\n`;
      }
      return s;
    },
    '#fields=index,utilization.gpu,utilization.memory,temperature.gpu,temperature.memory,power.draw,clocks.sm,clocks.mem,memory.total,memory.used\n',
  );
  await write('cpu_monitor_node_0_bench.log', (i, ts) => `${ts},${(i % 100).toFixed(2)},1.50,1.20,1.00\n`);
  await write(
    'memory_monitor_node_0_bench.log',
    (i, ts) => `${ts},1056000000,${800000000 - i},${256000000 + i},24.24,0,0\n`,
  );
  await write(
    'disk_monitor_node_0_bench.log',
    (_i, ts) => `${ts},/,1000000000000,400000000000,600000000000,40.00\n`,
  );
  await write(
    'network_monitor_node_0_bench.log',
    (i, ts) => `${ts},${i * 1000000},${i * 500000},1000000.00,500000.00,900.00,450.00\n`,
  );
  const rawBytes = readdirSync(raw).reduce((n, f) => n + statSync(join(raw, f)).size, 0);
  console.log(`raw: ${HOURS} h × 1 s, ${GPUS} GPUs: ${(rawBytes / 1048576).toFixed(0)} MiB`);
  for (const formats of [['svg'], ['csv', 'svg']] as ReportFormat[][]) {
    const t = performance.now();
    const cpu0 = process.cpuUsage();
    let peak = process.memoryUsage().rss;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    await buildMonitorReports({
      runDir: root,
      workflow: 'bench',
      runId: 'bench-1',
      schedule: {
        monitors: [],
        collectors: [],
        warnings: [],
        views: [
          {
            path: `lifecycle/workflow-${formats.join('-')}/`,
            group: 'lifecycle',
            note: 'bench',
            windowTask: null,
            window: null,
            targets: [{ host: 'localhost', gpus: 'all' }],
            scopes: ['gpu', 'cpu', 'memory', 'disk', 'network'],
            formats,
          },
        ],
      },
      collectors: [
        { host: 'localhost', name: 'bench', nodeId: '0', start: T0, stop: T0 + N * 1000, intervalMs: 1000 },
      ],
      runStart: T0,
      runEnd: T0 + N * 1000,
      events: [],
      taskSpans: new Map(),
      markerLines: () => ({ lines: [], searched: 0 }),
      rasterize: null,
    });
    clearInterval(timer);
    peak = Math.max(peak, process.memoryUsage().rss);
    const dir = join(root, 'sflow_monitor', 'lifecycle', `workflow-${formats.join('-')}`);
    const size = readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
    const cpu = process.cpuUsage(cpu0);
    console.log(
      `build [${formats.join(', ')}]: ${((performance.now() - t) / 1000).toFixed(1)} s wall, ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU, peak RSS ${(peak / 1048576).toFixed(0)} MiB, folder ${(size / 1048576).toFixed(0)} MiB`,
    );
  }
  rmSync(root, { recursive: true, force: true });
}

await main();
