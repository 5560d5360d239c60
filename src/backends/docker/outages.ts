/**
 * When a Docker endpoint did not answer (dockerd killed or restarting, an ssh pool host that stops
 * answering): the status calls note each failure and each answer, so the backend can tell an
 * attempt that ended around an outage — an engine restart stops the containers it runs — from one
 * that simply exited.
 */
import type { Endpoint } from '../container-engine.js';

interface Outage {
  from: number;
  /** the first answer after it (absent: still not answering) */
  to?: number;
  why: string;
}

export class EngineOutages {
  private readonly byHost = new Map<Endpoint, Outage[]>();

  failed(host: Endpoint, why: string, now = Date.now()): void {
    const list = this.byHost.get(host) ?? [];
    const last = list.at(-1);
    if (last && last.to === undefined) return;
    list.push({ from: now, why: why.split('\n')[0].slice(0, 300) });
    this.byHost.set(host, list);
  }

  answered(host: Endpoint, now = Date.now()): void {
    const last = this.byHost.get(host)?.at(-1);
    if (last && last.to === undefined) last.to = now;
  }

  /** the latest outage of `host` that overlaps [since, now], described; undefined if none */
  since(host: Endpoint, since: number): string | undefined {
    const o = this.byHost
      .get(host)
      ?.filter((x) => (x.to ?? Infinity) >= since)
      .at(-1);
    if (!o) return undefined;
    const secs = Math.max(1, Math.round(((o.to ?? Date.now()) - o.from) / 1000));
    return `${o.to === undefined ? 'not answering for' : 'no answer for'} ${secs} s: ${o.why}`;
  }
}
