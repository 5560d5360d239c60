/**
 * Merged pods at run time (backends.md §5.3; plan side: merge-groups.ts). The first launch of a
 * member creates the group's pod (every member inside, gated; its own gate open from the start),
 * its script ConfigMap and env Secret; every later launch of a member opens that member's gate
 * once the pod runs (one exec for all gates waiting). One log stream per pod, demuxed into each
 * member's log; each member has its own status: RUNNING at its start marker, EXITED with the code
 * its exit file announced. The pod is deleted once every member is stopped (or at the end).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type * as k8s from '@kubernetes/client-node';
import {
  handleKey,
  type HandleStatus,
  type Inspection,
  type LaunchRequest,
  type StopOptions,
  type StopOutcome,
  type TaskHandle,
} from '../backend.js';
import { mergedPodName } from './names.js';
import { buildPod, SCRIPT_DIR, type ManifestContext, type PodPlan } from './pod-manifest.js';
import type { PlannedTask } from '../../plan/types.js';
import { podState } from './pod-status.js';
import { CTL_SCRIPT, Demux, envFile, MERGE_DIR, supervisorScript } from './merged-script.js';
import { splitCommand } from './pod-script.js';
import { stampMs } from '../../util/stamp-time.js';
import { errorMessage } from '../../util/errors.js';
import type { K8sRun } from './run-context.js';
import { createObject, createPod, newHandle, type LaunchCore } from './task-pods.js';
import { k8sOperatorConfig } from './operator-config.js';

interface Member {
  index: number;
  handle?: TaskHandle;
  fd?: number;
  state: HandleStatus['state'];
  exit?: number | null;
  stopping?: { signal: string };
  error?: string;
  done?: () => void;
  finished?: Promise<void>;
  /** the member's own start and end times from its markers (ms) */
  startedAt?: number;
  endedAt?: number;
}

interface Group {
  pod: string;
  members: Map<string, Member>;
  created: Promise<void>;
  gatesWaiting: Set<number>;
  streaming: boolean;
  ended: boolean;
  /** ends the log stream (the pod is gone without it ending) */
  quit: AbortController;
}

/**
 * The pod of a merge group (every member inside, gated), built without the cluster: the first
 * member's launch creates it, and `--dry-run` prints it (dry-run-manifests.ts).
 */
export function mergedPod(
  c: ManifestContext,
  t: PlannedTask,
  name: string,
  artifacts: PodPlan['artifacts'],
  warn: (message: string) => void,
): k8s.V1Pod {
  const op = k8sOperatorConfig(t.operator);
  return buildPod(
    c,
    op,
    {
      name,
      role: 'merged',
      task: t.colocated!.group,
      attempt: 1,
      node: t.nodes[0].name,
      nodeIndex: 0,
      image: String(op.image ?? c.settings.reservation.image),
      command: ['bash', `${SCRIPT_DIR}/run.sh`],
      env: [],
      scriptConfigMap: `${name}-script`,
      ...(t.env.SFLOW_OUTPUT_DIR ? { outputDir: t.env.SFLOW_OUTPUT_DIR } : {}),
      ...(artifacts ? { artifacts } : {}),
      gpus: t.colocated!.gpus,
      extraVolumes: [
        { name: 'sflow-env', secret: { secretName: `${name}-env`, defaultMode: 0o400 } },
        { name: 'sflow-merge', emptyDir: {} },
      ],
      extraMounts: [
        { name: 'sflow-env', mountPath: '/sflow/env', readOnly: true },
        { name: 'sflow-merge', mountPath: MERGE_DIR },
      ],
    },
    warn,
  );
}

export class MergedPods {
  private readonly groups = new Map<string, Group>();
  private readonly byHandle = new Map<string, { g: Group; m: Member }>();

  constructor(
    private readonly run: () => K8sRun,
    private readonly push: (h: TaskHandle, s: HandleStatus) => void,
  ) {}

  has(h: TaskHandle): boolean {
    return this.byHandle.has(handleKey(h));
  }

  status(h: TaskHandle): HandleStatus | undefined {
    const e = this.byHandle.get(handleKey(h));
    return e ? this.memberStatus(e.m) : undefined;
  }

  inspect(h: TaskHandle): Inspection | undefined {
    const s = this.status(h);
    return s
      ? { alive: s.state !== 'EXITED', state: s.state, ...(s.exit ? { exit: s.exit } : {}), where: h.nodes }
      : undefined;
  }

  private memberStatus(m: Member): HandleStatus {
    const times = {
      ...(m.startedAt !== undefined ? { startedAt: m.startedAt } : {}),
      ...(m.endedAt !== undefined ? { endedAt: m.endedAt } : {}),
    };
    if (m.state !== 'EXITED') return { state: m.state, ...times };
    if (m.error) return { state: 'EXITED', error: m.error, ...times };
    return {
      state: 'EXITED',
      exit: m.stopping ? { code: null, signal: m.stopping.signal } : { code: m.exit ?? null, signal: null },
      ...times,
    };
  }

  /** a pod of the run changed: follow merged pods that started, settle members of ones that ended */
  onPod(labels: Record<string, string>): void {
    if (labels['sflow/role'] !== 'merged') return;
    for (const g of this.groups.values()) this.update(g);
  }

  async launch(core: LaunchCore, req: LaunchRequest, signal: AbortSignal): Promise<TaskHandle> {
    const t = req.task;
    const c = t.colocated!;
    const r = core.r;
    let g = this.groups.get(c.group);
    const index = c.members.indexOf(t.name);
    if (!g) {
      const pod = mergedPodName(r.run, c.group);
      g = {
        pod,
        members: new Map(),
        created: Promise.resolve(),
        gatesWaiting: new Set(),
        streaming: false,
        ended: false,
        quit: new AbortController(),
      };
      this.groups.set(c.group, g);
      g.created = this.create(core, req, g, index, signal);
    } else {
      g.gatesWaiting.add(index);
    }
    const handle = newHandle(core, req, [g.pod]);
    const m: Member = { index, handle, state: 'SUBMITTED' };
    m.finished = new Promise<void>((res) => (m.done = res));
    g.members.set(t.name, m);
    this.byHandle.set(handleKey(handle), { g, m });
    await g.created;
    req.record(handle);
    this.update(g);
    return handle;
  }

  private async create(
    core: LaunchCore,
    req: LaunchRequest,
    g: Group,
    first: number,
    signal: AbortSignal,
  ): Promise<void> {
    const r = core.r;
    const t = req.task;
    const all = t.colocated!.members;
    // the plan gives every member's launch spec with each member: the first launch builds the pod
    const data: Record<string, string> = {
      'run.sh': supervisorScript(all.length, [first]),
      'ctl.sh': CTL_SCRIPT,
    };
    const env: Record<string, string> = {};
    t.colocated!.launch.forEach((spec, i) => {
      const split = splitCommand(spec.argv);
      data[`m${i}.sh`] = split ? split.script : spec.argv.join(' ');
      env[`m${i}.env`] = envFile(spec.env);
    });
    const meta = (name: string): k8s.V1ObjectMeta => ({
      name,
      namespace: r.api.namespace,
      labels: {
        'app.kubernetes.io/managed-by': 'sflow',
        'sflow/run': r.run.label,
        'sflow/backend': r.backend,
        'sflow/role': 'merged',
      },
      annotations: { 'sflow/driver': core.manifest.driver, 'sflow/run-id': r.run.runId },
    });
    await createObject(r.api, 'configmaps', { metadata: meta(`${g.pod}-script`), data }, signal);
    await createObject(
      r.api,
      'secrets',
      { metadata: meta(`${g.pod}-env`), type: 'Opaque', stringData: env },
      signal,
    );
    const gpus = t.colocated!.gpus;
    const artifacts = await core.artifacts(signal);
    const pod = mergedPod(core.manifest, t, g.pod, artifacts, (msg) => r.log(`merged pod ${g.pod}: ${msg}`));
    await core.reservation.place(
      t.nodes[0].name,
      gpus,
      async () => {
        await createPod(r.api, pod, signal);
        return [g.pod];
      },
      signal,
    );
  }

  private update(g: Group): void {
    const r = this.run();
    const pod = r.watch.get(g.pod);
    const st = podState(pod);
    // once: a group whose stream ended stays ended (later pod events must not follow it again)
    if (pod && st.started && !g.streaming && !g.ended) this.follow(g);
    if (st.phase === 'Running' && g.gatesWaiting.size) {
      const open = [...g.gatesWaiting];
      g.gatesWaiting.clear();
      this.openGates(g, open);
    }
    if (!g.streaming && !g.ended && (st.terminated || st.problem)) this.endGroup(g, st.problem);
  }

  /**
   * Opens gates with one exec. The pod runs as soon as its container started, maybe before the
   * supervisor made the gate folder: the command makes it too (the supervisor's `mkdir -p` does
   * not mind). A gate the command could not open (an exec that failed or exited non-zero) fails
   * its member at once — a member whose gate is silently lost would wait forever.
   */
  private openGates(g: Group, open: number[]): void {
    const gates = open.map((i) => `${MERGE_DIR}/gate/${i}`).join(' ');
    void this.run()
      .api.exec(g.pod, 'main', ['sh', '-c', `mkdir -p ${MERGE_DIR}/gate && touch ${gates}`], {
        trace: ['gate', open.join(',')],
      })
      .then((res) => {
        if (res.exitCode !== 0) {
          const why = res.stderr.trim() || res.message || 'no reason given';
          throw new Error(`the gate command exited ${res.exitCode ?? 'without a code'}: ${why}`);
        }
      })
      .catch((e: unknown) => {
        for (const i of open) {
          const m = this.memberByIndex(g, i);
          if (m?.handle) this.settle(g, m, undefined, `gate not opened: ${errorMessage(e)}`);
        }
      });
  }

  private memberByIndex(g: Group, i: number): Member | undefined {
    return [...g.members.values()].find((m) => m.index === i);
  }

  private follow(g: Group): void {
    g.streaming = true;
    const r = this.run();
    const demux = new Demux();
    const onPieces = (pieces: ReturnType<Demux['push']>) => {
      for (const p of pieces) {
        if (p.member < 0) {
          // the supervisor's own words (not a member's): the driver log
          const text = p.data.toString('utf8').trimEnd();
          if (text) r.log(`merged pod ${g.pod}: ${text}`);
          continue;
        }
        const m = this.memberByIndex(g, p.member);
        if (!m?.handle) continue;
        if (p.kind === 'out') {
          m.fd ??= openSync(m.handle.logPath, 'a');
          writeSync(m.fd, p.data);
        } else if (p.kind === 'start' && m.state === 'SUBMITTED') {
          m.state = 'RUNNING';
          m.startedAt = stampMs(p.data.toString('latin1'));
          this.push(m.handle, this.memberStatus(m));
        } else if (p.kind === 'exit') {
          // `<code> <time>`
          const [code, at] = p.data.toString('latin1').trim().split(/\s+/);
          m.endedAt = at ? stampMs(at) : undefined;
          this.settle(g, m, Number(code) || 0);
        }
      }
    };
    void (async () => {
      try {
        await r.api.followLog(g.pod, 'main', (c) => onPieces(demux.push(c)), g.quit.signal);
      } catch {
        // the pod is gone or not streamable: members without an exit marker end below
      }
      onPieces(demux.end());
      g.streaming = false;
      this.endGroup(g);
    })();
  }

  private endGroup(g: Group, problem?: string): void {
    if (g.ended) return;
    g.ended = true;
    g.quit.abort();
    for (const m of g.members.values())
      if (m.state !== 'EXITED')
        this.settle(
          g,
          m,
          undefined,
          m.stopping ? undefined : `merged pod ${g.pod} ${problem ?? 'ended before the task did'}`,
        );
  }

  private settle(_g: Group, m: Member, code: number | undefined, error?: string): void {
    if (m.state === 'EXITED' || !m.handle) return;
    m.state = 'EXITED';
    if (code !== undefined) m.exit = code;
    if (error && !m.stopping) m.error = error;
    if (m.fd !== undefined) closeSync(m.fd);
    m.fd = undefined;
    this.push(m.handle, this.memberStatus(m));
    m.done?.();
  }

  /** stops members: their process groups in the pod, or the whole pod when no other member is left */
  async stop(
    handles: TaskHandle[],
    opts: StopOptions,
    signal: AbortSignal,
  ): Promise<Map<string, StopOutcome>> {
    const t0 = Date.now();
    const out = new Map<string, StopOutcome>();
    const r = this.run();
    const byGroup = new Map<Group, Member[]>();
    for (const h of handles) {
      const e = this.byHandle.get(handleKey(h));
      if (!e) continue;
      if (e.m.state === 'EXITED') {
        out.set(handleKey(h), { signals: [], gone: true, alreadyGone: true, elapsedMs: 0 });
        continue;
      }
      byGroup.set(e.g, [...(byGroup.get(e.g) ?? []), e.m]);
    }
    const force = opts.force === true || signal.aborted;
    const grace = force ? 0 : Math.max(1, Math.ceil(opts.graceMs / 1000));
    await Promise.all(
      [...byGroup].map(async ([g, ms]) => {
        for (const m of ms) m.stopping = { signal: force ? 'SIGKILL' : 'SIGTERM' };
        const others = [...g.members.values()].filter((m) => m.state !== 'EXITED' && !ms.includes(m));
        try {
          if (others.length === 0) {
            await r.api.call('delete', 'delete', 'pods', g.pod, (o) =>
              r.api.core.deleteNamespacedPod(
                { name: g.pod, namespace: r.api.namespace, gracePeriodSeconds: grace },
                o,
              ),
            );
          } else {
            await r.api.exec(
              g.pod,
              'main',
              ['bash', `${SCRIPT_DIR}/ctl.sh`, 'stop', String(grace), ...ms.map((m) => String(m.index))],
              {
                timeoutMs: grace * 1000 + 30_000,
                trace: ['stop', ms.map((m) => m.index).join(',')],
              },
            );
          }
        } catch {
          // the pod may be gone already: the members settle when its stream ends
        }
        await Promise.all(
          ms.map((m) =>
            within(m.finished, opts.graceMs + 30_000).then(() => {
              out.set(handleKey(m.handle!), {
                signals: force ? ['SIGKILL'] : ['SIGTERM'],
                gone: m.state === 'EXITED',
                alreadyGone: false,
                elapsedMs: Date.now() - t0,
              });
            }),
          ),
        );
        // the whole pod was deleted and its stream did not end: its members are over
        if (others.length === 0 && ms.some((m) => m.state !== 'EXITED')) this.endGroup(g);
      }),
    );
    return out;
  }
}

/** waits for `p` at most `ms` (the timer does not keep the driver alive once `p` settled) */
async function within(p: Promise<void> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((res) => (timer = setTimeout(res, ms)))]);
  clearTimeout(timer);
}

export function launchMerged(
  core: LaunchCore,
  merged: MergedPods,
  req: LaunchRequest,
  signal: AbortSignal,
): Promise<TaskHandle> {
  return merged.launch(core, req, signal);
}
