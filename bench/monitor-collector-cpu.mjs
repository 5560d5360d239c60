// Hardware monitor collector overhead: CPU time (user + sys, the collector and every process it
// starts) per second of wall time, sampling all node scopes, at 1 s and 100 ms intervals, plus the
// gpu scope through the fake nvidia-smi (a shell script, far costlier than the real binary).
//
//   node bench/monitor-collector-cpu.mjs          (SECONDS=20 by default; RUNS=3)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from './lib.mjs';

const SCRIPT = join(REPO, 'assets', 'sh', 'monitor-collector.sh');
const SECONDS = Number(process.env.SECONDS_PER_CASE ?? 20);
const RUNS = Number(process.env.RUNS ?? 3);

function measure(intervalMs, scopes, shell) {
  const dir = mkdtempSync(join(tmpdir(), 'sflow-bench-collector-'));
  try {
    const ticks = Math.round((SECONDS * 1000) / intervalMs);
    const cmd = `start=$(date +%s%N); ${shell} "$0" --interval-ms ${intervalMs} --scopes ${scopes} --out-dir "$1" --max-ticks ${ticks}; end=$(date +%s%N); times; echo "$(( (end - start) / 1000000 ))"`;
    const r = spawnSync('bash', ['-c', cmd, SCRIPT, dir], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${join(REPO, 'assets', 'test-bin')}:${process.env.PATH}` },
    });
    const lines = r.stdout.trim().split('\n');
    const wallMs = Number(lines[lines.length - 1]);
    // `times`: line 2 = children's user and sys time, e.g. "0m0.120s 0m0.340s"
    const sec = (s) => {
      const m = /(\d+)m([\d.]+)s/.exec(s);
      return Number(m[1]) * 60 + Number(m[2]);
    };
    const [u, s] = lines[lines.length - 2].split(/\s+/).map(sec);
    return { cpuPct: ((u + s) * 1000 * 100) / wallMs, wallMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`collector CPU share (% of one core), median of ${RUNS} × ${SECONDS} s`);
for (const shell of ['dash', 'bash']) {
  for (const [label, scopes] of [
    ['cpu,memory,disk,network', 'cpu,memory,disk,network'],
    ['all (gpu = fake nvidia-smi)', 'all'],
  ]) {
    for (const iv of [1000, 100]) {
      const rs = Array.from({ length: RUNS }, () => measure(iv, scopes, shell));
      console.log(
        `${shell.padEnd(5)} ${label.padEnd(28)} ${String(iv).padStart(5)} ms: ${median(rs.map((r) => r.cpuPct)).toFixed(2)} %`,
      );
    }
  }
}
