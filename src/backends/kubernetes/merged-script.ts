/**
 * What a merged pod runs (backends.md §5.3): a bash supervisor starting every member as a
 * background job (its own process group) that waits for its gate file, then runs the member's
 * script with the member's environment (a file of the group's Secret). Each member's output lines
 * reach the pod's one stream tagged `\x1em<i>\x1f`; when it ends, its exit code is written to
 * /sflow-merge/exit/<i> and announced as `\x1ex<i>\x1f<code> <time>`, its start as
 * `\x1es<i>\x1f<time>` (the member's own clock, `<seconds>.<fraction>`: its start and end times).
 * The driver demuxes the stream into each member's own log (demux.ts), opens a gate with an exec
 * `touch /sflow-merge/gate/<i>` when the member's dependencies are satisfied, and stops one member
 * with `ctl.sh stop` (TERM to its group, KILL after the grace). The pod ends when every member has.
 */
export const MERGE_DIR = '/sflow-merge';

export function supervisorScript(members: number, openAtStart: number[]): string {
  return [
    'set -m',
    // the shell's own job notices ("Terminated …") are no member's output
    'exec 2>/dev/null',
    `G=${MERGE_DIR}`,
    'mkdir -p "$G/gate" "$G/exit" "$G/pid"',
    ...openAtStart.map((i) => `: > "$G/gate/${i}"`),
    'tag() { sed -u "s/^/$(printf "\\036")m$1$(printf "\\037")/"; }',
    // the member's own clock: bash 5's microseconds, else date
    'now() { echo "${EPOCHREALTIME:-$(date +%s.%N)}"; }',
    'member() {',
    '  i=$1',
    '  while [ ! -e "$G/gate/$i" ]; do sleep 0.2; done',
    '  printf "\\036s%s\\037%s\\n" "$i" "$(now)"',
    '  { ( set -a; . "/sflow/env/m$i.env"; set +a; mkdir -p "$SFLOW_TASK_OUTPUT_DIR" 2>/dev/null; exec bash -l "/sflow/run/m$i.sh" ); echo $? > "$G/exit/$i.tmp"; now > "$G/exit/$i.at"; } 2>&1 | tag "$i"',
    '  mv "$G/exit/$i.tmp" "$G/exit/$i"',
    '  printf "\\036x%s\\037%s %s\\n" "$i" "$(cat "$G/exit/$i")" "$(cat "$G/exit/$i.at" 2>/dev/null)"',
    '}',
    `for i in $(seq 0 ${members - 1}); do member "$i" & echo $! > "$G/pid/$i"; done`,
    'trap \'for f in "$G"/pid/*; do kill -TERM -"$(cat "$f")" 2>/dev/null; done\' TERM',
    'wait',
    '',
  ].join('\n');
}

/** `ctl.sh stop <grace seconds> <member>…`: TERM to each member's group, KILL after the grace */
export const CTL_SCRIPT = [
  `G=${MERGE_DIR}`,
  'cmd=$1; grace=$2; shift 2',
  '[ "$cmd" = stop ] || exit 2',
  'for i in "$@"; do [ -e "$G/exit/$i" ] || kill -TERM -"$(cat "$G/pid/$i")" 2>/dev/null; done',
  'n=0',
  'while [ "$n" -lt "$((grace * 5))" ]; do',
  '  left=0; for i in "$@"; do [ -e "$G/exit/$i" ] || left=1; done',
  '  [ "$left" = 0 ] && exit 0',
  '  sleep 0.2; n=$((n + 1))',
  'done',
  'for i in "$@"; do [ -e "$G/exit/$i" ] || kill -KILL -"$(cat "$G/pid/$i")" 2>/dev/null; done',
  'exit 0',
  '',
].join('\n');

/** one member's environment as a file the supervisor sources (`K='v'` lines) */
export function envFile(env: Record<string, string>): string {
  return (
    Object.entries(env)
      .filter(([k]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
      .map(([k, v]) => `${k}='${v.replace(/'/g, `'\\''`)}'`)
      .join('\n') + '\n'
  );
}

export interface Demuxed {
  /** member index, or -1 for the supervisor's own output */
  member: number;
  kind: 'out' | 'start' | 'exit';
  data: Buffer;
}

/**
 * Splits the merged pod's stream into member pieces. Complete lines only (a partial line waits
 * for the next chunk); a member's last line without a newline is followed in the same line by
 * its exit marker, and is passed on without the newline.
 */
export class Demux {
  private rest = Buffer.alloc(0);

  push(chunk: Buffer): Demuxed[] {
    let buf = Buffer.concat([this.rest, chunk]);
    const out: Demuxed[] = [];
    for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
      out.push(...this.line(buf.subarray(0, nl)));
      buf = buf.subarray(nl + 1);
    }
    this.rest = Buffer.from(buf);
    return out;
  }

  /** the stream ended: what is left as one last line (no newline) */
  end(): Demuxed[] {
    const r = this.rest.length ? this.line(this.rest, false) : [];
    this.rest = Buffer.alloc(0);
    return r;
  }

  private line(line: Buffer, newline = true): Demuxed[] {
    const out: Demuxed[] = [];
    const parts: Buffer[] = [];
    let start = 0;
    for (let i = line.indexOf(0x1e); i >= 0; i = line.indexOf(0x1e, i + 1)) {
      parts.push(line.subarray(start, i));
      start = i;
    }
    parts.push(line.subarray(start));
    parts.forEach((p, k) => {
      const last = k === parts.length - 1;
      const nl = last && newline ? Buffer.from('\n') : Buffer.alloc(0);
      if (p.length === 0) return;
      const sep = p.indexOf(0x1f);
      const m =
        p[0] === 0x1e && sep > 1 ? /^([msx])(\d+)$/.exec(p.subarray(1, sep).toString('latin1')) : null;
      if (!m) {
        out.push({ member: -1, kind: 'out', data: Buffer.concat([p, nl]) });
        return;
      }
      const member = Number(m[2]);
      const body = p.subarray(sep + 1);
      if (m[1] === 'm') out.push({ member, kind: 'out', data: Buffer.concat([body, nl]) });
      else out.push({ member, kind: m[1] === 's' ? 'start' : 'exit', data: Buffer.from(body) });
    });
    return out;
  }
}
