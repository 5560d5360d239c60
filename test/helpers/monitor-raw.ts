/**
 * Synthetic collector output (the raw CSV layouts of docs/monitor.md) for report tests: `S`
 * samples 1 s apart from `T0`, 4 GPUs with known utilisation (GPU 3 idle), a CPU spike in
 * samples 20..29, constant memory.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const T0 = 1_767_225_600_000; // 2026-01-01
export const S = 60;
export const util = (gpu: number, i: number) => (gpu === 3 ? 0 : (i * 7 + gpu * 31) % 100);

export function writeRawRun(
  runDir: string,
  hosts: string[],
  opts: { gpuError?: boolean; skewMs?: number } = {},
): void {
  const raw = join(runDir, 'sflow_monitor', 'raw');
  mkdirSync(raw, { recursive: true });
  hosts.forEach((h, id) => {
    const ts = (i: number) => ((T0 + i * 1000 + (opts.skewMs ?? 0)) / 1000).toFixed(3);
    const gpu = ['#fields=index,utilization.gpu,memory.used,power.draw'];
    const cpu: string[] = [];
    const mem: string[] = [];
    for (let i = 0; i < S; i++) {
      if (opts.gpuError && i % 10 === 0) gpu.push(`${ts(i)},ERROR,nvidia-smi not found`);
      else for (let g = 0; g < 4; g++) gpu.push(`${ts(i)},${g},${util(g, i)},${g * 1024 + i},${100 + g}.5`);
      cpu.push(`${ts(i)},${i >= 20 && i < 30 ? '95.00' : '5.00'},1.00,0.50,0.25`);
      mem.push(`${ts(i)},1000,600,400,40.00,0,0`);
    }
    writeFileSync(join(raw, `gpu_monitor_node_${id}_${h}.log`), gpu.join('\n') + '\n');
    writeFileSync(join(raw, `cpu_monitor_node_${id}_${h}.log`), cpu.join('\n') + '\n');
    writeFileSync(join(raw, `memory_monitor_node_${id}_${h}.log`), mem.join('\n') + '\n');
  });
}
