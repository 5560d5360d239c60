/**
 * A line diff for people: `- old` / `+ new` lines with a little context and `@@ line N @@`
 * headers, like `diff -u` without file headers. Longest common subsequence after trimming the
 * common head and tail; a changed middle too large for that (over MAX_CELLS) is shown as one
 * replaced block. Output is capped at `maxLines` lines.
 */

const MAX_CELLS = 4_000_000;

type Op = [' ' | '-' | '+', string];

export function lineDiff(
  before: string,
  after: string,
  o: { context?: number; maxLines?: number } = {},
): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  if (midA.length === 0 && midB.length === 0) return [];
  const ops: Op[] = [
    ...a.slice(0, head).map((l): Op => [' ', l]),
    ...middle(midA, midB),
    ...a.slice(a.length - tail).map((l): Op => [' ', l]),
  ];
  return render(ops, o.context ?? 2, o.maxLines ?? 80);
}

function middle(a: string[], b: string[]): Op[] {
  if (a.length * b.length > MAX_CELLS) return [...a.map((l): Op => ['-', l]), ...b.map((l): Op => ['+', l])];
  // lcs[i][j]: length of the LCS of a[i..] and b[j..]
  const w = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i * w + j] =
        a[i] === b[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
  const out: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push([' ', a[i++]]);
      j++;
    } else if (i < a.length && (j === b.length || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]))
      out.push(['-', a[i++]]);
    else out.push(['+', b[j++]]);
  }
  return out;
}

function render(ops: Op[], context: number, maxLines: number): string[] {
  const keep = new Array<boolean>(ops.length).fill(false);
  ops.forEach(([k], n) => {
    if (k === ' ') return;
    for (let x = Math.max(0, n - context); x <= Math.min(ops.length - 1, n + context); x++) keep[x] = true;
  });
  const out: string[] = [];
  let lineA = 1;
  let lineB = 1;
  let inHunk = false;
  for (let n = 0; n < ops.length; n++) {
    const [k, text] = ops[n];
    if (keep[n]) {
      if (!inHunk) out.push(`@@ line ${lineA} → ${lineB} @@`);
      inHunk = true;
      out.push(`${k} ${text}`);
    } else inHunk = false;
    if (k !== '+') lineA++;
    if (k !== '-') lineB++;
  }
  if (out.length <= maxLines) return out;
  return [...out.slice(0, maxLines), `… ${out.length - maxLines} more diff line(s)`];
}
