/**
 * A child process driving the GPU registry (test/fixtures/gpu-registry/claimer.ts) over stdin/stdout,
 * optionally as another user. The child runs the TypeScript sources under plain Node through the
 * ts-loader fixture, so no build step is needed.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

export const ROOT = path.resolve(import.meta.dirname, '../..');
const LOADER = path.join(ROOT, 'test/fixtures/ts-loader/register.js');
const CHILD = path.join(ROOT, 'test/fixtures/gpu-registry/claimer.ts');

export interface Reply {
  ok?: boolean;
  ready?: boolean;
  pid?: number;
  indices?: number[];
  uuids?: string[];
  reaped?: number[];
  ignored?: string[];
  error?: string;
  code?: string;
  overlaps?: string[];
}

export class Claimer {
  readonly proc: ChildProcessWithoutNullStreams;
  private readonly replies: Reply[] = [];
  private waiter: (() => void) | undefined;
  readonly exited: Promise<void>;

  constructor(runId: string, env: NodeJS.ProcessEnv, as?: { uid: number; gid: number }) {
    this.proc = spawn(process.execPath, ['--import', LOADER, CHILD, runId], { cwd: ROOT, env, ...as });
    createInterface({ input: this.proc.stdout }).on('line', (l) => {
      this.replies.push(JSON.parse(l) as Reply);
      this.waiter?.();
    });
    this.exited = new Promise((r) => this.proc.once('exit', () => r()));
  }

  /** next JSON line, or throw at the deadline */
  async next(timeoutMs = 15_000): Promise<Reply> {
    const deadline = Date.now() + timeoutMs;
    while (this.replies.length === 0) {
      if (Date.now() > deadline)
        throw new Error(`no reply from claimer ${this.proc.pid} within ${timeoutMs} ms`);
      await new Promise<void>((r) => {
        this.waiter = r;
        setTimeout(r, 100);
      });
    }
    return this.replies.shift() as Reply;
  }

  send(line: string): void {
    this.proc.stdin.write(line + '\n');
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
    await this.exited;
  }
}
