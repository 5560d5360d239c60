/**
 * In-cluster probes (backends.md §5.5): `tcp_port` / `http_get` / `http_post` checks of a
 * Kubernetes task run inside the cluster, through one probe pod per run (`probe_pod_image`,
 * default curlimages/curl; the backend's node selector and tolerations; no GPUs), created on the
 * first check. A check is an exec in it: tcp with `nc -z` (or bash's /dev/tcp, or curl), http with
 * `curl -K -` whose request (URL, headers, body) arrives on stdin, so nothing of it is in an
 * exec's command line. Until the pod runs, checks answer "not ready" with the reason.
 * `SFLOW_K8S_PROBE_VIA_POD=0` makes the checks run from the driver instead; `log_watch` always
 * reads the local task log.
 */
import type * as k8s from '@kubernetes/client-node';
import type { CheckResult, ProbeTransport } from '../../probes/types.js';
import { errorMessage } from '../../util/errors.js';
import { apiMessage } from './client.js';
import { probePodName } from './names.js';
import { podState } from './pod-status.js';
import { objectMeta, type K8sRun } from './run-context.js';

const TCP = [
  'h=$1; p=$2; t=$3',
  'if command -v nc >/dev/null 2>&1; then exec nc -z -w "$t" "$h" "$p"; fi',
  'if command -v bash >/dev/null 2>&1; then exec timeout "$t" bash -c "exec 3<>/dev/tcp/$h/$p"; fi',
  // curl: connected and then timed out (28) still counts when a connect time was measured
  'c=$(curl -s -o /dev/null -w "%{time_connect}" --connect-timeout "$t" --max-time "$t" "telnet://$h:$p" </dev/null); rc=$?',
  '[ "$rc" = 0 ] && exit 0',
  '[ "$rc" = 28 ] && awk -v c="$c" "BEGIN { exit !(c + 0 > 0) }" && exit 0',
  'exit 1',
].join('\n');

/** a value for curl's config file: double-quoted, backslash escapes */
export function curlQuote(v: string): string {
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

export function curlConfig(
  req: { method: string; url: string; headers: Record<string, string>; body?: string },
  timeoutS: number,
): string {
  const lines = [
    'silent',
    'show-error',
    'location',
    `max-time = ${curlQuote(String(timeoutS))}`,
    `request = ${curlQuote(req.method)}`,
    `url = ${curlQuote(req.url)}`,
    ...Object.entries(req.headers).map(([k, v]) => `header = ${curlQuote(`${k}: ${v}`)}`),
    ...(req.body !== undefined ? [`data-binary = ${curlQuote(req.body)}`] : []),
    `write-out = ${curlQuote('\n%{http_code}')}`,
  ];
  return lines.join('\n') + '\n';
}

export class ProbePod implements ProbeTransport {
  readonly where: string;
  private created: Promise<void> | undefined;
  private failure: string | undefined;

  constructor(private readonly r: K8sRun) {
    this.where = `probe pod ${probePodName(r.run)}`;
  }

  private get name(): string {
    return probePodName(this.r.run);
  }

  /** undefined once the pod runs; else why checks cannot run yet */
  private async ready(signal: AbortSignal): Promise<string | undefined> {
    this.created ??= this.create().catch((e: unknown) => {
      this.failure = apiMessage(e);
    });
    await this.created;
    if (this.failure) return `probe pod could not be created: ${this.failure}`;
    const st = podState(this.r.watch.get(this.name));
    if (st.phase === 'Running') return undefined;
    await this.r.watch.waitFor(
      () => (podState(this.r.watch.get(this.name)).phase === 'Running' ? true : undefined),
      5_000,
      signal,
    );
    const now = podState(this.r.watch.get(this.name));
    if (now.phase === 'Running') return undefined;
    return `${this.where} not running yet (${now.problem ?? now.unschedulable ?? now.phase})`;
  }

  private async create(): Promise<void> {
    const s = this.r.settings;
    const body: k8s.V1Pod = {
      metadata: objectMeta(this.r, this.name, 'probe'),
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 0,
        ...(Object.keys(s.nodeSelector).length ? { nodeSelector: s.nodeSelector } : {}),
        ...(s.tolerations.length ? { tolerations: s.tolerations } : {}),
        containers: [
          {
            name: 'main',
            image: s.probePodImage,
            command: ['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 5; done'],
          },
        ],
      },
    };
    await this.r.api.call('write', 'create', 'pods', this.name, (o) =>
      this.r.api.core.createNamespacedPod({ namespace: this.r.api.namespace, body, ...this.r.api.create }, o),
    );
  }

  async tcp(host: string, port: number, timeoutMs: number, signal: AbortSignal): Promise<CheckResult> {
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const not = await this.ready(signal);
    if (not) return { ok: false, detail: `${where} not checked: ${not}` };
    const t = Math.max(1, Math.ceil(timeoutMs / 1000));
    try {
      const r = await this.r.api.exec(
        this.name,
        'main',
        ['sh', '-c', TCP, 'sflow-probe', host, String(port), String(t)],
        {
          timeoutMs: timeoutMs + 5_000,
          signal,
          trace: ['tcp', where],
        },
      );
      return r.exitCode === 0
        ? { ok: true, detail: `${where} open (from ${this.where})` }
        : {
            ok: false,
            detail: `${where} closed (from ${this.where}${r.stderr.trim() ? `: ${r.stderr.trim().split('\n')[0]}` : ''})`,
          };
    } catch (e) {
      return { ok: false, detail: `${where} not checked: ${errorMessage(e)}` };
    }
  }

  async http(
    req: { method: 'GET' | 'POST'; url: string; headers: Record<string, string>; body?: string },
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ status: number; body: string } | { error: string }> {
    const not = await this.ready(signal);
    if (not) return { error: not };
    const t = Math.max(1, Math.ceil(timeoutMs / 1000));
    try {
      const r = await this.r.api.exec(this.name, 'main', ['curl', '-K', '-'], {
        stdin: curlConfig(req, t),
        timeoutMs: timeoutMs + 5_000,
        signal,
        trace: ['http', req.method],
      });
      if (r.exitCode !== 0)
        return {
          error: `curl exit ${r.exitCode ?? '?'}${r.stderr.trim() ? `: ${r.stderr.trim().split('\n')[0]}` : ''}`,
        };
      const text = r.stdout.toString('utf8');
      const nl = text.lastIndexOf('\n');
      return { status: Number(text.slice(nl + 1)) || 0, body: text.slice(0, Math.max(0, nl)) };
    } catch (e) {
      return { error: errorMessage(e) };
    }
  }

  /** deleted with the run's other pods (by label); nothing to do here but forget it */
  async close(): Promise<void> {
    await this.created?.catch(() => undefined);
  }
}
