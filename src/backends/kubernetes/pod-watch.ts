/**
 * One watch for every pod of the run (label `sflow/run=<run>`), never one request per pod per
 * tick: a list to start (and after the watch ends or falls too far behind, 410 Gone), then a
 * watch from that resourceVersion. Every consumer (reservation, task status, probes) reads the
 * cache and is told about changes; the request count does not grow with the number of pods.
 */
import type * as k8s from '@kubernetes/client-node';
import { apiMessage, type KubeApi } from './client.js';

type PodChange = 'ADDED' | 'MODIFIED' | 'DELETED';
export type PodListener = (pod: k8s.V1Pod, type: PodChange) => void;

const CHANGES = new Set<string>(['ADDED', 'MODIFIED', 'DELETED']);
const isChange = (t: string): t is PodChange => CHANGES.has(t);
/** the API's Status object a watch sends with an ERROR event (a pod's kind is `Pod`) */
const isStatus = (o: k8s.V1Pod | k8s.V1Status): o is k8s.V1Status => o.kind === 'Status';

export class PodWatch {
  private readonly pods = new Map<string, k8s.V1Pod>();
  private readonly listeners = new Set<PodListener>();
  private abort: AbortController | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;
  private rv: string | undefined;
  /** the watch is connected (else consumers may ask for a list) */
  healthy = false;
  lastError: string | undefined;

  constructor(
    private readonly api: KubeApi,
    private readonly labelSelector: string,
  ) {}

  /** Lists once and keeps watching until `stop`. Resolves after the first list. */
  start(): Promise<void> {
    this.running ??= this.list().then(() => {
      void this.loop();
    });
    return this.running;
  }

  stop(): void {
    this.stopped = true;
    this.healthy = false;
    this.abort?.abort();
  }

  on(l: PodListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  get(name: string): k8s.V1Pod | undefined {
    return this.pods.get(name);
  }

  all(): k8s.V1Pod[] {
    return [...this.pods.values()];
  }

  /** One list of the run's pods into the cache (the fallback when the watch is down). */
  async list(signal?: AbortSignal): Promise<void> {
    const got = await this.api.call(
      'read',
      'list',
      'pods',
      this.labelSelector,
      (opts) =>
        this.api.core.listNamespacedPod(
          { namespace: this.api.namespace, labelSelector: this.labelSelector },
          opts,
        ),
      { signal },
    );
    const seen = new Set<string>();
    for (const p of got.items) {
      const name = p.metadata?.name ?? '';
      seen.add(name);
      this.apply(p, this.pods.has(name) ? 'MODIFIED' : 'ADDED');
    }
    for (const [name, p] of [...this.pods]) if (!seen.has(name)) this.apply(p, 'DELETED');
    this.rv = got.metadata?.resourceVersion;
  }

  /** Resolves with the first value `test` gives for a change (or the cache as it is), or undefined after `ms`. */
  waitFor<T>(test: () => T | undefined, ms: number, signal?: AbortSignal): Promise<T | undefined> {
    const now = test();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve) => {
      const done = (v: T | undefined) => {
        clearTimeout(timer);
        off();
        signal?.removeEventListener('abort', onAbort);
        resolve(v);
      };
      const onAbort = () => done(undefined);
      const timer = setTimeout(() => done(test()), Math.max(1, ms));
      const off = this.on(() => {
        const v = test();
        if (v !== undefined) done(v);
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private apply(pod: k8s.V1Pod, type: 'ADDED' | 'MODIFIED' | 'DELETED'): void {
    const name = pod.metadata?.name;
    if (!name) return;
    if (type === 'DELETED') this.pods.delete(name);
    else this.pods.set(name, pod);
    for (const l of this.listeners) {
      try {
        l(pod, type);
      } catch {
        // a failing consumer must not stop the watch
      }
    }
  }

  private async loop(): Promise<void> {
    let backoff = 200;
    while (!this.stopped) {
      const ended = new Promise<unknown>((resolve) => {
        this.api
          .watchPods(
            this.labelSelector,
            this.rv,
            (type, obj) => {
              if (type === 'ERROR') {
                this.abort?.abort();
                resolve({ status: isStatus(obj) ? obj.code : undefined });
                return;
              }
              if (isStatus(obj)) return;
              const pod = obj;
              if (type === 'BOOKMARK') {
                this.rv = pod.metadata?.resourceVersion ?? this.rv;
                return;
              }
              this.rv = pod.metadata?.resourceVersion ?? this.rv;
              backoff = 200;
              this.apply(pod, isChange(type) ? type : 'MODIFIED');
            },
            (err) => resolve(err),
          )
          .then(
            (ac) => {
              this.abort = ac;
              this.healthy = true;
              if (this.stopped) ac.abort();
            },
            (err) => resolve(err),
          );
      });
      const err = await ended;
      this.healthy = false;
      if (this.stopped) return;
      if (!err) continue; // the server ended the watch (timeoutSeconds): go on from the same version
      this.lastError = apiMessage(err);
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 5_000);
      // resume with a fresh list: events may have been missed (410 Gone, a dropped connection)
      try {
        await this.list();
      } catch (e) {
        this.lastError = apiMessage(e);
      }
    }
  }
}
