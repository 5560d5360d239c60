/**
 * tcp_port: met when a TCP connection to host:port succeeds within the per-check limit.
 * With `on_node: each` the caller passes every assigned node's address and all of them
 * must accept; with `first` just one host.
 */

import { connect } from 'node:net';
import type { CheckResult, ProbeCheck, ProbeTransport } from './types.js';

export interface TcpCheckOptions {
  /** hosts to check; all must accept (default `127.0.0.1`) */
  hosts?: string[];
  port: number;
  /** connect from there (inside a cluster) instead of from the driver */
  transport?: ProbeTransport;
}

/** One connection attempt; resolves, never rejects. */
export function tryConnect(
  host: string,
  port: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<CheckResult> {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve({ ok: false, detail: `${where} not checked (aborted)` });
    const sock = connect({ host, port });
    const finish = (r: CheckResult) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      sock.removeAllListeners('connect');
      sock.on('error', () => undefined);
      sock.destroy();
      resolve(r);
    };
    const onAbort = () => finish({ ok: false, detail: `${where} no answer (check cut short)` });
    const timer = setTimeout(
      () => finish({ ok: false, detail: `${where} no answer within ${timeoutMs} ms` }),
      Math.max(1, timeoutMs),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    sock.once('connect', () => finish({ ok: true, detail: `${where} open` }));
    sock.once('error', (e: NodeJS.ErrnoException) =>
      finish({ ok: false, detail: `${where} ${e.code ?? e.message}` }),
    );
  });
}

export function tcpPortCheck(opts: TcpCheckOptions): ProbeCheck {
  const hosts = opts.hosts && opts.hosts.length > 0 ? [...new Set(opts.hosts)] : ['127.0.0.1'];
  const port = opts.port;
  return {
    kind: 'tcp_port',
    describe: () => `tcp_port ${hosts.map((h) => `${h}:${port}`).join(',')}`,
    async check(signal, eachCheckTimeoutMs) {
      const t = opts.transport;
      const results = await Promise.all(
        hosts.map((h) =>
          t ? t.tcp(h, port, eachCheckTimeoutMs, signal) : tryConnect(h, port, eachCheckTimeoutMs, signal),
        ),
      );
      const bad = results.filter((r) => !r.ok);
      if (bad.length === 0) {
        return { ok: true, detail: hosts.length === 1 ? results[0].detail : `${hosts.length} hosts open` };
      }
      const shown = bad.slice(0, 3).map((r) => r.detail);
      if (bad.length > 3) shown.push(`… ${bad.length - 3} more`);
      return { ok: false, detail: shown.join('; ') };
    },
  };
}
