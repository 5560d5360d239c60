/**
 * The dying driver of the conformance suite's recover case: runs a driver fixture in a child
 * `node` (with the TypeScript loader), SIGKILLs it as soon as it prints `launched`, and resolves
 * once it is gone. Its ledger stays behind for `recover` to read.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const loader = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'ts-loader', 'register.js');

export function killDriverOnceLaunched(
  driver: string,
  args: string[],
  o: { env?: NodeJS.ProcessEnv; timeoutMs: number; settleMs?: number },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', loader, driver, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: o.env ?? process.env,
    });
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`driver did not launch in time: ${err}`));
    }, o.timeoutMs);
    child.stderr.on('data', (d) => (err += String(d)));
    child.stdout.on('data', (d) => {
      if (!String(d).includes('launched')) return;
      clearTimeout(timer);
      child.kill('SIGKILL');
      child.once('exit', () => setTimeout(resolve, o.settleMs ?? 0));
    });
  });
}
