// Counts process creations (clone without CLONE_THREAD, fork, vfork) and execve calls in an
// `strace -f -o FILE` trace and divides by the number of containers: see bench/k8s-sandbox-forks.ts.
import { readFileSync } from 'node:fs';

const [file, n] = [process.argv[2], Number(process.argv[3] ?? 1)];
const lines = readFileSync(file, 'utf8').split('\n');
const forks = lines.filter(
  (l) => /\b(clone3?|v?fork)\(/.test(l) && !/CLONE_THREAD/.test(l) && !/resumed/.test(l),
).length;
const execs = lines.filter((l) => /\bexecve\(/.test(l) && !/resumed/.test(l));
const progs = new Map();
for (const l of execs) {
  const m = /execve\("([^"]+)"/.exec(l);
  if (m) progs.set(m[1], (progs.get(m[1]) ?? 0) + 1);
}
console.log(
  JSON.stringify({
    containers: n,
    forksPerContainer: +(forks / n).toFixed(1),
    execsPerContainer: +(execs.length / n).toFixed(1),
  }),
);
console.log(
  [...progs]
    .sort((a, b) => b[1] - a[1])
    .map(([p, c]) => `${p} ${c}`)
    .join('\n'),
);
