/**
 * Docker pool hosts: the hardware monitor collector runs on the host over ssh (the destination the
 * backend reaches with `docker -H ssh://…`), so the host needs no sflow. The script travels as an
 * argument of a small remote wrapper (`exec sh -c WRAPPER`): the collector writes its CSV files
 * into a private temporary folder there, `tail -v -f` streams their new lines back (each file
 * announced by a `==> NAME <==` header), and the driver appends them to the per-node raw files.
 * Stop: the driver closes ssh's stdin; the wrapper sees EOF, stops the collector, lets tail flush,
 * removes its folder and exits. A killed ssh client ends the session the same way (EOF on stdin),
 * and the collector also watches the wrapper's pid (`--parent-pid`).
 */
import { spawn } from 'node:child_process';
import { closeSync, createWriteStream, mkdirSync, openSync, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  collectorArgs,
  type CollectorLaunch,
  type CollectorLauncher,
  type RunningCollector,
} from '../../monitor/launcher.js';
import { superviseCollector } from '../../monitor/supervise.js';

/** how long the wrapper gets to stop after EOF, then TERM → KILL of ssh's group */
const GRACE_MS = 8000;
const TERM_GRACE_MS = 2000;

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** runs as `sh -c WRAPPER sflow-monitor COLLECTOR FILE… -- ARGS…` on the host */
const WRAPPER = [
  'c=$1; shift; files=',
  'while [ "$1" != -- ]; do files="$files $1"; shift; done; shift',
  'd=$(mktemp -d "${TMPDIR:-/tmp}/sflow-monitor.XXXXXX") || exit 1',
  'cd "$d" || exit 1',
  'for f in $files; do : >>"$f"; done',
  'sh -c "$c" sflow-collector "$@" --out-dir "$d" --parent-pid $$ </dev/null &',
  'cp=$!',
  'tail -v -n +1 -f $files </dev/null &',
  'tp=$!',
  'cat >/dev/null',
  'kill -TERM $cp 2>/dev/null; wait $cp 2>/dev/null',
  'sleep 1; kill -TERM $tp 2>/dev/null; wait $tp 2>/dev/null',
  'cd / && rm -rf "$d"',
].join('\n');

const SAFE_NAME = /^[a-z]+_monitor_node_[A-Za-z0-9._-]+\.log$/;

/** the remote command line of one node's collector (one string: ssh hands it to the login shell) */
export function sshCollectorCommand(l: CollectorLaunch, host: string, script: string): string {
  const args = collectorArgs(l.spec, { rawDir: '.', host }).filter(
    (_, i, a) => a[i] !== '--out-dir' && a[i - 1] !== '--out-dir',
  );
  const scopes = Object.keys(l.spec.scopes);
  if (l.spec.custom.length) scopes.push('custom');
  const files = scopes.map((s) => `${s}_monitor_node_${l.spec.nodeId}_${host}.log`);
  return ['exec sh -c', WRAPPER, 'sflow-monitor', script, ...files, '--', ...args]
    .map((w, i) => (i === 0 ? w : shq(w)))
    .join(' ');
}

export function sshCollectorLauncher(env: NodeJS.ProcessEnv = process.env): CollectorLauncher {
  return {
    start(l: CollectorLaunch): Promise<RunningCollector> {
      const dest = l.spec.node.sshDestination;
      if (!dest) return Promise.reject(new Error(`'${l.spec.node.name}' has no ssh destination`));
      mkdirSync(l.rawDir, { recursive: true });
      const host = l.spec.node.name.replace(/[^A-Za-z0-9.-]/g, '-');
      const cmd = sshCollectorCommand(l, host, readFileSync(l.scriptPath, 'utf8'));
      const err = openSync(join(l.rawDir, `collector_node_${l.spec.nodeId}_${host}.stderr`), 'a');
      const startedAt = Date.now();
      const child = spawn('ssh', ['-o', 'BatchMode=yes', '-o', 'ConnectTimeout=20', dest, cmd], {
        detached: true,
        stdio: ['pipe', 'pipe', err],
        env,
      });
      closeSync(err);
      const { stdin, stdout } = child;
      if (!stdin || !stdout) throw new Error('ssh started without pipes');
      stdin.on('error', () => undefined);
      const outs = new Map<string, WriteStream>();
      let current: WriteStream | undefined;
      createInterface({ input: stdout }).on('line', (line) => {
        const h = /^==> (.*) <==$/.exec(line);
        if (h) {
          const name = h[1];
          current = undefined;
          if (!SAFE_NAME.test(name)) return;
          if (!outs.has(name)) outs.set(name, createWriteStream(join(l.rawDir, name), { flags: 'a' }));
          current = outs.get(name);
        } else if (line && current) current.write(`${line}\n`);
      });
      const stop = superviseCollector(child, {
        goneOn: 'close',
        graceMs: TERM_GRACE_MS,
        beforeStop: async (gone) => {
          stdin.end(); // EOF: the wrapper stops the collector and cleans up
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([gone, new Promise<void>((r) => (timer = setTimeout(r, GRACE_MS)))]);
          clearTimeout(timer);
        },
        afterStop: async (gone) => {
          await gone;
          await Promise.all([...outs.values()].map((s) => new Promise<void>((r) => s.end(r))));
        },
      });
      return Promise.resolve({
        hostName: host,
        nodeId: String(l.spec.nodeId),
        startedAt,
        stop,
      });
    },
  };
}
