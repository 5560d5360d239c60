/**
 * The Kubernetes API as sflow uses it: the official @kubernetes/client-node (1.4: its 2.x needs
 * Node ≥ 22), pinned to one namespace, every request bounded (30 s reads and writes, 300 s
 * deletes; a timed-out read is retried on the next tick by its caller) and traced like a
 * subprocess call (tool `kube-api`, args `<verb> <resource> [name]`: the "External Command
 * Health" section and command_trace.jsonl). Names and selectors only ever reach a trace — never
 * an object body, so a Secret's values cannot.
 */
import { PassThrough, Writable } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { onAbort } from '../../util/abort-fanout.js';
import { boundedCall } from '../../util/bounded-call.js';
import { errorMessage } from '../../util/errors.js';

export const READ_TIMEOUT_MS = 30_000;
export const DELETE_TIMEOUT_MS = 300_000;
export const TOOL = 'kube-api';

export type CallKind = 'read' | 'write' | 'delete';

/** HTTP status of a failed API call (0 when there was no answer) */
export function apiStatus(e: unknown): number {
  const code = typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined;
  return typeof code === 'number' ? code : 0;
}

/** The API server's own message of a failed call (its Status body), else the error's. */
export function apiMessage(e: unknown): string {
  const body = typeof e === 'object' && e !== null && 'body' in e ? e.body : undefined;
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: string };
      if (parsed.message) return parsed.message;
    } catch {
      if (body.trim()) return body.trim().slice(0, 300);
    }
  } else if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string') {
    return body.message;
  }
  return errorMessage(e).split('\n')[0];
}

/** Request options that make client-node honour an AbortSignal (its fetch takes the context's signal). */
function withSignal(signal: AbortSignal): k8s.ConfigurationOptions {
  // the object-parameter APIs hand options to the Observable layer: Observable middleware
  const mw: k8s.ObservableMiddleware = {
    pre: (ctx) => {
      ctx.setSignal(signal);
      return new k8s.Observable(Promise.resolve(ctx));
    },
    post: (ctx) => new k8s.Observable(Promise.resolve(ctx)),
  };
  return { middleware: [mw], middlewareMergeStrategy: 'append' };
}

export interface KubeTarget {
  /** the loaded kubeconfig (context already selected) */
  kc: k8s.KubeConfig;
  namespace: string;
  /** field validation asked for on creates (`--extra-kubectl-apply-args --validate=…`) */
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
  /** field manager of creates (`--field-manager`) */
  fieldManager?: string;
  /** cap of one read (`--request-timeout`) */
  readTimeoutMs?: number;
}

export interface ExecResult {
  exitCode: number | null;
  stdout: Buffer;
  stderr: string;
  /** the Status the server sent at the end (Failure reason when the command could not run) */
  message?: string;
}

export class KubeApi {
  readonly kc: k8s.KubeConfig;
  readonly namespace: string;
  readonly core: k8s.CoreV1Api;
  readonly authz: k8s.AuthorizationV1Api;
  readonly custom: k8s.CustomObjectsApi;
  readonly apiext: k8s.ApiextensionsV1Api;
  readonly resource: k8s.ResourceV1Api;
  readonly create: { fieldValidation?: string; fieldManager?: string };
  private readonly readMs: number;

  constructor(t: KubeTarget) {
    this.kc = t.kc;
    this.namespace = t.namespace;
    this.core = t.kc.makeApiClient(k8s.CoreV1Api);
    this.authz = t.kc.makeApiClient(k8s.AuthorizationV1Api);
    this.custom = t.kc.makeApiClient(k8s.CustomObjectsApi);
    this.apiext = t.kc.makeApiClient(k8s.ApiextensionsV1Api);
    this.resource = t.kc.makeApiClient(k8s.ResourceV1Api);
    this.readMs = t.readTimeoutMs ?? READ_TIMEOUT_MS;
    this.create = {
      ...(t.fieldValidation ? { fieldValidation: t.fieldValidation } : {}),
      ...(t.fieldManager ? { fieldManager: t.fieldManager } : {}),
    };
  }

  /**
   * One bounded, traced request. `fn` gets the request options carrying the signal. Reads and
   * deletes (idempotent) are retried twice on a missing answer or a 5xx/429; writes twice on an
   * explicit 5xx/429 only (the server said it did not do it), never on a missing answer (it may have).
   */
  call<T>(
    kind: CallKind,
    verb: string,
    resource: string,
    name: string | undefined,
    fn: (opts: k8s.ConfigurationOptions) => Promise<T>,
    o: { signal?: AbortSignal; expected?: number[]; timeoutMs?: number } = {},
  ): Promise<T> {
    const timeoutMs = o.timeoutMs ?? (kind === 'delete' ? DELETE_TIMEOUT_MS : this.readMs);
    return boundedCall(TOOL, [verb, resource, ...(name ? [name] : [])], (signal) => fn(withSignal(signal)), {
      timeoutMs,
      retries: 2,
      retryDelayMs: 300,
      retryOn: (e) => {
        const s = apiStatus(e);
        return (s === 0 && kind !== 'write') || s === 429 || s >= 500;
      },
      signal: o.signal,
      expected: o.expected ? (e) => o.expected!.includes(apiStatus(e)) : undefined,
    });
  }

  /** like `call`, resolving `undefined` on the expected statuses (404 of a get or delete) */
  async maybe<T>(
    kind: CallKind,
    verb: string,
    resource: string,
    name: string | undefined,
    fn: (opts: k8s.ConfigurationOptions) => Promise<T>,
    o: { signal?: AbortSignal; expected?: number[]; timeoutMs?: number } = {},
  ): Promise<T | undefined> {
    const expected = o.expected ?? [404];
    try {
      return await this.call(kind, verb, resource, name, fn, { ...o, expected });
    } catch (e) {
      if (expected.includes(apiStatus(e))) return undefined;
      throw e;
    }
  }

  /**
   * Watches the namespace's pods that match `labelSelector` from `resourceVersion`; `done` is
   * called once when the watch ends (server timeout, error, abort). Returns the abort handle.
   */
  async watchPods(
    labelSelector: string,
    resourceVersion: string | undefined,
    /** `obj`: the pod, or on ERROR the API's Status */
    onEvent: (type: string, obj: k8s.V1Pod | k8s.V1Status) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const watch = new k8s.Watch(this.kc);
    return boundedCall(
      TOOL,
      ['watch', 'pods', labelSelector],
      () =>
        watch.watch(
          `/api/v1/namespaces/${this.namespace}/pods`,
          {
            labelSelector,
            allowWatchBookmarks: true,
            timeoutSeconds: 300,
            ...(resourceVersion ? { resourceVersion } : {}),
          },
          (type: string, obj: k8s.V1Pod | k8s.V1Status) => onEvent(type, obj),
          done,
        ),
      { timeoutMs: this.readMs },
    );
  }

  /**
   * Follows a container's log into `sink` until the container ends (or `signal` aborts). Resolves
   * with the number of bytes written; rejects when the stream could not be opened.
   */
  async followLog(
    pod: string,
    container: string,
    sink: (chunk: Buffer) => void,
    signal: AbortSignal,
  ): Promise<number> {
    // a follow asked for after its own stop is no request at all (and no failed call)
    if (signal.aborted) return 0;
    const out = new PassThrough();
    let bytes = 0;
    out.on('data', (b: Buffer) => {
      bytes += b.length;
      sink(b);
    });
    let stop = (): void => {
      out.end();
    };
    const unfollow = onAbort(signal, () => stop());
    const ended = new Promise<void>((resolve) => {
      out.once('end', resolve);
      out.once('close', resolve);
    });
    try {
      const ctl = await boundedCall(
        TOOL,
        ['logs', 'pods', `${pod}/${container}`, '--follow'],
        () => new k8s.Log(this.kc).log(this.namespace, pod, container, out, { follow: true }),
        // a follow we cut short ourselves while it opened is the end we asked for, not a failure
        { timeoutMs: this.readMs, signal, expected: () => signal.aborted },
      );
      if (signal.aborted) ctl.abort();
      stop = () => {
        ctl.abort();
        out.end();
      };
      if (!signal.aborted) await ended;
      return bytes;
    } finally {
      unfollow();
    }
  }

  /**
   * Runs a command in a container (pods/exec over WebSocket), bounded; stdin when given.
   * Exit code from the final Status (`NonZeroExitCode` causes), null when it did not run.
   */
  async exec(
    pod: string,
    container: string,
    command: string[],
    o: {
      stdin?: string | Buffer;
      timeoutMs?: number;
      signal?: AbortSignal;
      trace?: string[];
      /** stdout goes here instead of into the result (large copies) */
      sink?: (chunk: Buffer) => void;
    } = {},
  ): Promise<ExecResult> {
    const chunks: Buffer[] = [];
    let stderr = '';
    const stdout = new Writable({
      write(c: Buffer, _e, cb) {
        if (o.sink) o.sink(Buffer.from(c));
        else chunks.push(Buffer.from(c));
        cb();
      },
    });
    const errs = new Writable({
      write(c: Buffer, _e, cb) {
        if (stderr.length < 64_000) stderr += c.toString();
        cb();
      },
    });
    const input = o.stdin !== undefined ? new PassThrough() : null;
    return boundedCall(
      TOOL,
      ['exec', 'pods', pod, ...(o.trace ?? [command[0]])],
      (signal) =>
        new Promise<ExecResult>((resolve, reject) => {
          let status: k8s.V1Status | undefined;
          let settled = false;
          const finish = () => {
            if (settled) return;
            settled = true;
            const code = exitCodeOf(status);
            resolve({
              exitCode: code,
              stdout: Buffer.concat(chunks),
              stderr,
              ...(status?.status === 'Failure' && code === null ? { message: status.message } : {}),
            });
          };
          new k8s.Exec(this.kc)
            .exec(this.namespace, pod, container, command, stdout, errs, input, false, (s) => {
              status = s;
            })
            .then((socket: unknown) => {
              const ws = socket as {
                close(): void;
                on(event: 'close' | 'error', f: (e: Error) => void): void;
              };
              const close = () => ws.close();
              signal.addEventListener('abort', close, { once: true });
              ws.on('close', () => {
                signal.removeEventListener('abort', close);
                if (signal.aborted && !status) reject(signal.reason as Error);
                else finish();
              });
              ws.on('error', (e) => {
                if (!settled) reject(e);
              });
              if (input) input.end(o.stdin);
            }, reject);
        }),
      { timeoutMs: o.timeoutMs ?? this.readMs, signal: o.signal },
    );
  }
}

/** exit code in an exec's final Status: 0 on Success, the NonZeroExitCode cause, else null */
export function exitCodeOf(s: k8s.V1Status | undefined): number | null {
  if (!s) return null;
  if (s.status === 'Success') return 0;
  const cause = s.details?.causes?.find((c) => c.reason === 'ExitCode');
  if (cause?.message !== undefined && /^\d+$/.test(cause.message)) return Number(cause.message);
  return null;
}
