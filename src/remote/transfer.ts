/**
 * What crosses the connection: the inputs up together with the start of the controller (one ssh
 * call: unpack, then `remote-agent start`), and the run's files back (`remote-agent pack` → local
 * `tar -xf -`). Both bounded.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { SflowError } from '../util/sflow-error.js';
import { shCommand, shQuote, type SshTarget } from './ssh-target.js';
import { sshCall, sshFailure } from './ssh-call.js';
import { writeTar, type TarEntry } from './tar-write.js';

export function agentCommand(sflow: string, verb: string, session: string, args: string[] = []): string {
  return [sflow, 'remote-agent', verb, session, ...args].map(shQuote).join(' ');
}

/** One bounded ssh call running `script` with a tar stream of `inputs` on its stdin. */
export async function sshWithTar(
  t: SshTarget,
  script: string,
  inputs: TarEntry[],
  what: string,
): Promise<Awaited<ReturnType<typeof sshCall>>> {
  const tar = new PassThrough();
  const writing = writeTar(tar, inputs).then(
    () => tar.end(),
    (e: unknown) => tar.destroy(e as Error),
  );
  const r = await sshCall(t, shCommand(script), { timeoutMs: 5 * 60_000, input: tar, what });
  await writing.catch(() => undefined);
  return r;
}

/**
 * Unpack the inputs into `<session>/inputs` and start the controller detached. Throws the
 * classified error when that failed; the caller then removes the (unstarted) session folder.
 */
export async function uploadAndStart(
  t: SshTarget,
  sflow: string,
  session: string,
  inputs: TarEntry[],
  sflowArgs: string[],
): Promise<void> {
  const q = shQuote(session);
  const script = `umask 077; mkdir -p ${q}/inputs && tar -xf - -C ${q}/inputs && exec ${agentCommand(sflow, 'start', session, ['--', ...sflowArgs])}`;
  const what = 'uploading the inputs and starting sflow';
  const r = await sshWithTar(t, script, inputs, what);
  if (r.code !== 0 || r.timedOut || !/^started supervisor=\d+/m.test(r.stdout))
    throw sshFailure(t, r.code === 0 ? { ...r, code: 1 } : r, what);
}

/** Copy the session's output (`logs` set or `all`) into `dest`. */
export async function fetchOutput(
  t: SshTarget,
  sflow: string,
  session: string,
  mode: 'logs' | 'all',
  dest: string,
): Promise<void> {
  mkdirSync(dest, { recursive: true });
  const untar = spawn('tar', ['-xf', '-', '-C', dest], { stdio: ['pipe', 'ignore', 'pipe'] });
  let tarErr = '';
  untar.stderr.on('data', (d: Buffer) => (tarErr += d.toString('utf8')));
  const tarDone = new Promise<number | null>((resolve) => {
    untar.on('error', () => resolve(-1));
    untar.on('close', (c) => resolve(c));
  });
  untar.stdin.on('error', () => undefined);
  const r = await sshCall(t, agentCommand(sflow, 'pack', session, ['--mode', mode]), {
    timeoutMs: (mode === 'all' ? 60 : 10) * 60_000,
    stdout: untar.stdin,
    what: 'fetching the output',
  });
  untar.stdin.end();
  const tarCode = await tarDone;
  if (r.code !== 0 || r.timedOut) throw sshFailure(t, r, 'fetching the output');
  if (tarCode !== 0)
    throw new SflowError(
      'remote.fetch',
      `could not unpack the fetched files into ${dest}: ${tarErr.trim() || `tar exit ${tarCode}`}`,
      {
        phase: 'run',
        hint:
          tarCode === -1 ? 'install tar on this machine' : 'check that the folder is writable and has room',
      },
    );
}
