/**
 * The attached `docker run` of one member of a multi-node task: its output goes through the driver
 * so every line of the task log is labelled with the member's node and rank (`[node-1 #1] …`,
 * backends.md §3.4); a line is written whole, so members never split each other's lines. A
 * single-container task does not use this: its client writes straight into the log, byte for byte.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { GroupExit } from '../../util/process-group.js';

/** what the backend needs of an attached client (a GroupHandle is one too) */
export interface AttachedClient {
  readonly exited: Promise<GroupExit>;
  exitInfo(): GroupExit | undefined;
  killGroupNow(): void;
}

/** the label of a member's lines: its node's name and its rank among the task's nodes */
export const memberLabel = (spec: { node?: { name: string }; nodeIndex: number }): string =>
  `[${spec.node?.name ?? 'node'} #${spec.nodeIndex}] `;

function labelLines(stream: Readable, label: string, write: (s: string) => void): Promise<void> {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const text = rest + chunk;
    const cut = text.lastIndexOf('\n');
    if (cut < 0) {
      rest = text;
      return;
    }
    rest = text.slice(cut + 1);
    write(
      text
        .slice(0, cut + 1)
        .split(/(?<=\n)/)
        .map((l) => label + l)
        .join(''),
    );
  });
  return new Promise((resolve) =>
    stream.once('close', () => {
      if (rest) write(`${label}${rest}\n`);
      resolve();
    }),
  );
}

export async function spawnLabelled(o: {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  logPath: string;
  label: string;
}): Promise<AttachedClient> {
  const fd = openSync(o.logPath, 'a');
  const write = (s: string) => {
    try {
      writeSync(fd, s);
    } catch {
      /* the log went away: nothing to land it in */
    }
  };
  const child = spawn(o.argv[0], o.argv.slice(1), {
    cwd: o.cwd,
    env: o.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const failure = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', (e) => resolve(e));
  });
  if (failure) {
    closeSync(fd);
    throw new Error(`cannot start '${o.argv[0]}': ${failure.message}`);
  }
  child.on('error', () => undefined);
  let exit: GroupExit | undefined;
  const drained = Promise.all([
    labelLines(child.stdout, o.label, write),
    labelLines(child.stderr, o.label, write),
  ]);
  const exited = new Promise<GroupExit>((resolve) =>
    child.once('exit', (code, signal) => {
      // the exit counts once every line it wrote is in the log
      void drained.then(() => {
        closeSync(fd);
        exit = { code, signal };
        resolve(exit);
      });
    }),
  );
  return {
    exited,
    exitInfo: () => exit,
    killGroupNow: () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    },
  };
}
