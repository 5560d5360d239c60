/**
 * Ports for services a test starts later (a recipe's `-s PORT=…`). They are drawn below the
 * kernel's ephemeral range (net.ipv4.ip_local_port_range, 32768–60999 by default): a port from
 * inside it, even one found free by `listen(0)`, can be taken by any outgoing connection (srun's
 * own sockets, the engines, a test suite running beside this one) before the service binds it.
 */
import { createServer } from 'node:net';

const LOW = 20_000;
const HIGH = 32_767;

function tryPort(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

/** `n` distinct ports free on `host` right now (0.0.0.0: on every address) */
export async function freePorts(n: number, host = '0.0.0.0'): Promise<number[]> {
  const out = new Set<number>();
  for (let tries = 0; out.size < n; tries++) {
    if (tries > 1_000) throw new Error(`no free port between ${LOW} and ${HIGH} after 1,000 tries`);
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (!out.has(port) && (await tryPort(port, host))) out.add(port);
  }
  return [...out];
}
