/**
 * The same launcher as perl-launcher.ts, in JavaScript, for machines without Perl: run as
 * `node -e <this>` (the driver's own Node binary). It costs a Node start once per driver (~50 ms,
 * ~40 MiB) and Node's synchronous spawn per task, in its own process, so the driver still never
 * blocks in a fork; it is the lifeline in the same way (stdin end of file: stop every group).
 * Replies are batched per event-loop turn, as the Perl launcher batches them per pass.
 */
export const NODE_LAUNCHER = String.raw`
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const VERSION = 1;
for (const s of ['SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGPIPE']) process.on(s, () => {});
const groups = new Map();
let out = '';
const flush = () => {
  const b = Buffer.from(out, 'latin1');
  out = '';
  try { for (let k = 0; k < b.length; ) k += fs.writeSync(1, b, k); } catch {}
};
// the replies of one event-loop turn leave in one write (see perl-launcher.ts)
const say = (l) => { if (!out) setImmediate(flush); out += l + '\n'; };
const alive = (g) => { try { process.kill(-g, 0); return true; } catch (e) { return e.code === 'EPERM'; } };
function starttime(pid) {
  try {
    const s = fs.readFileSync('/proc/' + pid + '/stat', 'latin1');
    return s.slice(s.lastIndexOf(')') + 2).split(' ')[19] || '-';
  } catch { return '-'; }
}
function launch(payload) {
  const f = payload.toString('utf8').split('\0');
  const [op, id, cwd, log, gr, argc] = f;
  if (op !== 'L') return;
  const n = Number(argc);
  const argv = f.slice(6, 6 + n);
  const env = {};
  for (const e of f.slice(6 + n)) { const i = e.indexOf('='); if (i > 0) env[e.slice(0, i)] = e.slice(i + 1); }
  let fd;
  try { fd = fs.openSync(log, 'a'); } catch (e) { return say('E ' + id + ' ' + (os.constants.errno[e.code] || 5)); }
  let c;
  try {
    c = spawn(argv[0], argv.slice(1), { cwd: cwd || undefined, env, detached: true, stdio: ['ignore', fd, fd] });
  } catch (e) { fs.closeSync(fd); return say('E ' + id + ' ' + (os.constants.errno[e.code] || 5)); }
  fs.closeSync(fd);
  c.once('error', (e) => say('E ' + id + ' ' + (os.constants.errno[e.code] || 5)));
  c.once('spawn', () => {
    groups.set(c.pid, Number(gr) || 5000);
    say('S ' + id + ' ' + c.pid + ' ' + starttime(c.pid));
    c.once('exit', (code, sig) => {
      say('X ' + c.pid + ' ' + (sig ? -1 : code) + ' ' + (sig ? os.constants.signals[sig] : 0));
      if (!alive(c.pid)) groups.delete(c.pid);
    });
  });
}
let lifelineStarted = false;
function lifeline() {
  if (lifelineStarted) return;
  lifelineStarted = true;
  let g = [...groups.keys()].filter(alive);
  for (const p of g) { try { process.kill(-p, 'SIGTERM'); process.kill(-p, 'SIGCONT'); } catch {} }
  const t0 = Date.now();
  const end = t0 + Math.max(0, ...g.map((p) => groups.get(p))) + 2000;
  const killed = new Set();
  const tick = () => {
    g = g.filter(alive);
    for (const p of g) {
      if (killed.has(p) || Date.now() - t0 < groups.get(p)) continue;
      killed.add(p);
      try { process.kill(-p, 'SIGKILL'); } catch {}
    }
    if (g.length && Date.now() < end) return setTimeout(tick, 50);
    for (const p of g) { try { process.kill(-p, 'SIGKILL'); } catch {} }
    process.exit(0);
  };
  tick();
}
process.on('SIGTERM', lifeline);
let buf = Buffer.alloc(0);
process.stdin.on('data', (d) => {
  buf = buf.length ? Buffer.concat([buf, d]) : d;
  for (;;) {
    const nl = buf.indexOf(10);
    if (nl < 0) break;
    const len = Number(buf.subarray(0, nl).toString());
    if (buf.length < nl + 1 + len) break;
    launch(buf.subarray(nl + 1, nl + 1 + len));
    buf = buf.subarray(nl + 1 + len);
  }
});
process.stdin.on('end', lifeline);
process.stdin.on('error', lifeline);
say('R ' + VERSION);
`;
