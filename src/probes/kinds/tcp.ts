/**
 * `tcp_port`: ready when a TCP connection to the task's node (or `host`) on `port` succeeds; with
 * `on_node: each` every assigned node must accept. The check is ../tcp.ts.
 */
import { defineProbeKind, type ProbeCommon } from '../kind.js';
import { tcpPortCheck } from '../tcp.js';

interface TcpPlanned {
  port: number;
  /** the host given, or the task's first node */
  host: string;
  onNode: 'first' | 'each';
  /** every host checked (`each`: the task's nodes) */
  hosts: string[];
}

/** Hosts a tcp_port probe checks: every assigned node for `each`, else one host. */
export function tcpHosts(p: Pick<TcpPlanned, 'onNode' | 'hosts'> & { host?: string }): string[] {
  if (p.onNode === 'each' && p.hosts.length > 0) return p.hosts;
  return [p.host ?? p.hosts[0] ?? '127.0.0.1'];
}

const threshold = (p: ProbeCommon) => (p.role === 'readiness' ? p.successThreshold : p.failureThreshold);

export const tcpPortProbe = defineProbeKind({
  name: 'tcp_port',
  schema: (k) =>
    k.strictObject('tcp_port probe', {
      port: k.intOrExpr({ min: 1, max: 65535 }),
      /** default: the first assigned node's IP */
      host: k.str().optional(),
      on_node: k.oneOf(['first', 'each']).optional(),
    }),
  plan: (body, k) => ({
    port: k.int(body.port, 'port', `tcp_port.port of task '${k.task}'`),
    ...(body.host !== undefined && body.host !== null ? { host: k.text(body.host, 'host') } : {}),
    onNode: body.on_node === 'each' ? ('each' as const) : ('first' as const),
  }),
  place: (d: { port: number; host?: string; onNode: 'first' | 'each' }, f): TcpPlanned => {
    const first = d.host ?? f.nodeIps[0] ?? '127.0.0.1';
    const hosts =
      d.onNode === 'each' && !d.host && f.nodeIps.length
        ? [...new Set(f.nodeIps.map((ip) => ip || first))]
        : [first];
    return { port: d.port, host: first, onNode: d.onNode, hosts };
  },
  describe: (p) =>
    `tcp_port ${tcpHosts(p)
      .map((h) => `${h}:${p.port}`)
      .join(',')}`,
  dryRun: (p, timing) => `tcp_port ${p.hosts.join(',')}:${p.port} (${timing}, threshold=${threshold(p)})`,
  check: (p, ctx) =>
    tcpPortCheck({
      hosts: tcpHosts(p),
      port: p.port,
      ...(ctx.transport ? { transport: ctx.transport } : {}),
    }),
});
