/**
 * Processes the Kubernetes emulator's sandbox creates per container start (issue 29: the 1,000-pod
 * run was bound by the emulator's container start, not by sflow).
 *
 *   strace -f -qq -e trace=clone,clone3,fork,vfork,execve -o /tmp/forks.txt \
 *     node --import ./test/fixtures/ts-loader/register.js bench/k8s-sandbox-forks.ts 20
 *   node bench/k8s-sandbox-forks-count.mjs /tmp/forks.txt 20    # forks and execs per container
 *
 * Without strace it prints the wall time of N sequential container starts (each `true`, with one
 * read-only bind mount at a new path, as a ConfigMap volume has), median of the per-start times.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { namespacesAvailable, startSandbox } from '../test/fixtures/k8s-emulator/sandbox.js';

const n = Number(process.argv[2] ?? 20);
if (!namespacesAvailable()) {
  console.error('k8s-sandbox-forks: needs root and util-linux unshare (namespaces); none here');
  process.exit(2);
}
const base = mkdtempSync(join(tmpdir(), 'k8semu-forks-'));
try {
  const vol = join(base, 'vol');
  mkdirSync(vol);
  writeFileSync(join(vol, 'run.sh'), 'echo hi\n');
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const dir = join(base, `pod${i}`);
    mkdirSync(join(dir, 'root'), { recursive: true });
    mkdirSync(join(dir, 'scratch'), { recursive: true });
    const t0 = performance.now();
    const box = startSandbox({
      argv: ['/bin/sh', '/sflow-script/run.sh'],
      env: { PATH: '/usr/bin:/bin' },
      workingDir: '/',
      hostname: `pod${i}`,
      mounts: [{ src: vol, dst: '/sflow-script', readOnly: true }],
      rootDir: join(dir, 'root'),
      scratchDir: join(dir, 'scratch'),
    });
    let out = '';
    box.proc.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((res) => box.proc.on('close', (c) => res(c)));
    times.push(performance.now() - t0);
    if (code !== 0 || out !== 'hi\n')
      throw new Error(`container ${i}: exit ${code}, output ${JSON.stringify(out)}`);
  }
  times.sort((a, b) => a - b);
  console.log(
    JSON.stringify({ containers: n, medianMs: Math.round(times[n >> 1]), minMs: Math.round(times[0]) }),
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
