/**
 * Following a remote session from here: one long ssh call running `remote-agent follow`, its output
 * copied to our stdout except the end line, which tells the outcome. No deadline (a run may last
 * days); a dead link is noticed by ssh's keep-alives (ServerAliveInterval, see ssh-target.ts).
 * `stop()` ends the follow (not the run).
 */
import { Writable } from 'node:stream';
import type { SshTarget } from './ssh-target.js';
import { sshCall, type SshResult } from './ssh-call.js';
import { agentCommand } from './transfer.js';
import { END_MARK, parseEndLine, type RemoteState } from './session-layout.js';
import { escapeControls } from '../util/ansi.js';

export type FollowMode = 'stream' | 'logs' | 'status';

export interface FollowResult {
  /** the run's outcome when the follow saw the end; undefined when the connection went first */
  end?: { code: number; state: RemoteState };
  ssh: SshResult;
}

/** Copies lines to `write`, holding back only what could be the start of the end line. */
class EndLineFilter extends Writable {
  end_?: { code: number; state: RemoteState };
  private rest = '';
  constructor(private readonly write_: (s: string) => void) {
    super();
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    const text = this.rest + chunk.toString('utf8');
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    for (const line of lines) this.line(line + '\n');
    if (this.rest && !END_MARK.startsWith(this.rest) && !this.rest.startsWith(END_MARK)) {
      this.write_(this.rest);
      this.rest = '';
    }
    cb();
  }
  private line(l: string): void {
    const end = parseEndLine(l);
    if (end) this.end_ = end;
    else this.write_(l);
  }
  flushRest(): void {
    if (this.rest) this.line(this.rest);
    this.rest = '';
  }
}

/** a line (or a piece of one) with its control characters escaped, its final newline kept */
export function terminalLine(s: string): string {
  return s.endsWith('\n') ? `${escapeControls(s.slice(0, -1).replace(/\r$/, ''))}\n` : escapeControls(s);
}

export function pollSeconds(): string {
  const s = Number(process.env.SFLOW_SSH_POLL_SECONDS);
  return String(Number.isFinite(s) && s > 0 ? s : 5);
}

export async function followRemote(
  t: SshTarget,
  sflow: string,
  session: string,
  mode: FollowMode,
  tty: boolean,
  write: (s: string) => void = (s) => process.stdout.write(s),
): Promise<FollowResult> {
  // snapshots carry the tails of task logs: their control characters are shown, not obeyed (the
  // streamed remote console is sflow's own, already cleaned of task escapes)
  const shown = (s: string) => (mode === 'stream' ? s : terminalLine(s));
  const filter = new EndLineFilter((s) => write(shown(tty ? s.replace(/\r\n/g, '\n') : s)));
  const ssh = await sshCall(
    t,
    agentCommand(sflow, 'follow', session, ['--mode', mode, '--interval', pollSeconds()]),
    {
      timeoutMs: 0,
      stdout: filter,
      tty,
      what: 'following the run',
    },
  );
  await new Promise<void>((resolve) => filter.write(Buffer.alloc(0), () => resolve()));
  filter.flushRest();
  return { end: filter.end_, ssh };
}
