/**
 * The Docker engine calls of the Docker backend (and of the local backend's `docker_run` tasks),
 * each bounded (util/bounded-exec.ts) and batched: one `inspect`, `stop`, `kill` or `rm` per engine
 * endpoint for any number of containers. The CLI program is `docker` unless `SFLOW_DOCKER_CLI`
 * names another (`podman` takes the same verbs). Orphans (backends.md §3.5): every container sflow
 * starts carries its driver's identity (label `sflow.driver=<host>:<pid>:<start time>`,
 * ../driver-identity.ts); once per run and endpoint the containers named `sflow-p…` whose driver
 * is a process of THIS host that provably ended (pid gone, or reused: another start time) are
 * removed. Containers of drivers on other hosts sharing a pool host, and unlabelled ones, are left
 * alone and named in a note.
 */
import { hostname } from 'node:os';
import { containerCli, endpointArgs } from '../operators/docker-run.js';
import { boundedExec, type ExecOutcome } from '../util/bounded-exec.js';
import { driverGone, parseDriverId } from './driver-identity.js';

/**
 * `host` undefined: the CLI's own default endpoint (DOCKER_HOST, the current context); `-H` URL,
 * or `context:<name>` for a docker context (`--context`).
 */
export type Endpoint = string | undefined;

/** the CLI program of an environment (`SFLOW_DOCKER_CLI`, else `docker`): the plan's rule, one place */
export const cliProgram = (env: NodeJS.ProcessEnv): string => containerCli(env);

export interface ContainerState {
  status: string;
  exitCode: number;
  oomKilled: boolean;
  error: string;
  /** the engine's State.StartedAt / State.FinishedAt (ms since epoch; absent while unset) */
  startedAt?: number;
  finishedAt?: number;
}

// the free-text error goes last: it may hold tabs
const INSPECT_FORMAT =
  '{{.Name}}\t{{.State.Status}}\t{{.State.ExitCode}}\t{{.State.OOMKilled}}\t{{.State.StartedAt}}\t{{.State.FinishedAt}}\t{{.State.Error}}';

/** An engine timestamp (RFC 3339, nanoseconds) in ms; undefined for Go's zero time or nonsense. */
export function engineTime(iso: string | undefined): number | undefined {
  const ms = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

export class DockerEngine {
  readonly program: string;

  constructor(private readonly env: NodeJS.ProcessEnv) {
    this.program = cliProgram(env);
  }

  /** argv prefix for an endpoint */
  prefix(host: Endpoint): string[] {
    return endpointArgs(host);
  }

  exec(
    host: Endpoint,
    args: string[],
    signal: AbortSignal,
    o: { timeoutMs?: number; retries?: number; expected?: (r: ExecOutcome) => boolean } = {},
  ): Promise<ExecOutcome> {
    return boundedExec(this.program, [...this.prefix(host), ...args], {
      timeoutMs: o.timeoutMs ?? 30_000,
      retries: o.retries ?? 0,
      ...(o.expected ? { expected: o.expected } : {}),
      signal,
      env: this.env,
      cwd: '/', // independent of the driver's folder (a deleted cwd would fail every call)
    });
  }

  /**
   * One `inspect --format` for many containers: its output lines (containers that are gone print
   * none; exit 1 with output means some names are gone, no output and a failure means the engine).
   */
  private async inspectLines(
    host: Endpoint,
    names: string[],
    format: string,
    signal: AbortSignal,
  ): Promise<string[]> {
    if (names.length === 0) return [];
    const r = await this.exec(
      host,
      ['inspect', '--type', 'container', '--format', format, ...names],
      signal,
      // an inspect after removal: the gone names print nothing, the rest their lines
      { timeoutMs: 20_000, retries: 1, expected: gone },
    );
    if (!r.ok && !r.stdout.trim() && !/no such (object|container)/i.test(r.stderr))
      throw new Error(`${this.program} inspect${host ? ` on ${host}` : ''} failed: ${describe(r)}`);
    return r.stdout.split('\n');
  }

  /** one `inspect` for many containers: name → state (missing names are absent) */
  async inspect(host: Endpoint, names: string[], signal: AbortSignal): Promise<Map<string, ContainerState>> {
    const out = new Map<string, ContainerState>();
    for (const line of await this.inspectLines(host, names, INSPECT_FORMAT, signal)) {
      const [name, status, code, oom, started, finished, ...err] = line.split('\t');
      if (!name || !status) continue;
      const startedAt = engineTime(started);
      const finishedAt = engineTime(finished);
      out.set(name.replace(/^\//, ''), {
        status,
        exitCode: Number(code),
        oomKilled: oom === 'true',
        error: err.join('\t').trim(),
        ...(startedAt !== undefined ? { startedAt } : {}),
        ...(finishedAt !== undefined ? { finishedAt } : {}),
      });
    }
    return out;
  }

  /**
   * one `inspect` for many containers: name → value of `label` ('' where the container has none;
   * containers that are gone are absent)
   */
  async labels(
    host: Endpoint,
    names: string[],
    label: string,
    signal: AbortSignal,
  ): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const format = `{{.Name}}\t{{index .Config.Labels ${JSON.stringify(label)}}}`;
    for (const line of await this.inspectLines(host, names, format, signal)) {
      const tab = line.indexOf('\t');
      if (tab <= 0) continue;
      const value = line.slice(tab + 1).trim();
      out.set(line.slice(0, tab).replace(/^\//, ''), value === '<no value>' ? '' : value);
    }
    return out;
  }

  /** `docker stop -t <s>`: TERM, then KILL after the grace (whole seconds, rounded up) */
  stop(host: Endpoint, names: string[], graceMs: number, signal: AbortSignal): Promise<ExecOutcome> {
    const secs = Math.max(0, Math.ceil(graceMs / 1000));
    return this.exec(host, ['stop', '-t', String(secs), ...names], signal, {
      timeoutMs: graceMs + 60_000,
      expected: goneOrStopped,
    });
  }

  kill(host: Endpoint, names: string[], signal: AbortSignal): Promise<ExecOutcome> {
    return this.exec(host, ['kill', ...names], signal, { timeoutMs: 60_000, expected: goneOrStopped });
  }

  rm(host: Endpoint, names: string[], signal: AbortSignal): Promise<ExecOutcome> {
    return this.exec(host, ['rm', '-f', ...names], signal, { timeoutMs: 60_000, retries: 1, expected: gone });
  }

  /** names of every container (running or not) whose name starts with `prefix` */
  async names(host: Endpoint, prefix: string, signal: AbortSignal): Promise<string[]> {
    const r = await this.exec(
      host,
      ['ps', '-a', '--filter', `name=^${prefix}`, '--format', '{{.Names}}'],
      signal,
      {
        timeoutMs: 20_000,
        retries: 1,
      },
    );
    if (!r.ok) throw new Error(`${this.program} ps${host ? ` on ${host}` : ''} failed: ${describe(r)}`);
    return r.stdout
      .split('\n')
      .map((s) => s.trim())
      .filter((s) => s.startsWith(prefix));
  }

  version(host: Endpoint, signal: AbortSignal, timeoutMs = 20_000): Promise<ExecOutcome> {
    return this.exec(host, ['version', '--format', '{{.Server.Version}}'], signal, { timeoutMs });
  }
}

/**
 * Every error line of a call says that a container is gone (`No such container`/`object`): an
 * expected answer about containers sflow removed itself, not a failure of the engine.
 */
function gone(r: ExecOutcome): boolean {
  return errorLines(r).every((l) => /no such (object|container)/i.test(l));
}

/** gone, or not running any more (a stop or kill of a container that already ended) */
function goneOrStopped(r: ExecOutcome): boolean {
  return errorLines(r).every((l) => /no such (object|container)|is not running/i.test(l));
}

/** stderr's error lines (docker's harmless warnings left out); none: not an expected answer */
function errorLines(r: ExecOutcome): string[] {
  if (r.timedOut || r.exitCode === null) return ['(no answer)'];
  const lines = r.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^WARNING:/i.test(l));
  return lines.length ? lines : ['(no error text)'];
}

/** one line about a failed call */
export function describe(r: ExecOutcome): string {
  if (r.timedOut) return 'timed out';
  if (r.errorCode === 'ENOENT') return 'program not found';
  const tail = r.stderr.trim().split('\n').filter(Boolean).at(-1);
  return tail ?? r.errorMessage ?? `exit ${String(r.exitCode)}`;
}

/** pid of the driver that named a container `sflow-p<pid>-…` */
export function driverPid(name: string): number | undefined {
  const m = /^sflow-p(\d+)-/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** the label every container sflow starts carries: its driver's `<host>:<pid>:<start time>` */
export const DRIVER_LABEL = 'sflow.driver';

export type OrphanVerdict =
  /** its driver was a process of this host that ended (or whose pid now is another process) */
  | 'reap'
  /** its driver still runs on this host (this driver included) */
  | 'alive'
  /** its driver runs or ran on another host: its pid means nothing here */
  | 'elsewhere'
  /** no driver label (an older sflow, or not sflow's): nothing proves its driver ended */
  | 'unlabelled';

/** What reaping does with one `sflow-p…` container, from its driver label. */
export function orphanVerdict(
  label: string | undefined,
  o: { host?: string; gone?: (label: string, host: string) => boolean } = {},
): OrphanVerdict {
  const host = o.host ?? hostname();
  const d = parseDriverId(label);
  if (!d || label === undefined) return 'unlabelled';
  if (d.host !== host) return 'elsewhere';
  return (o.gone ?? driverGone)(label, host) ? 'reap' : 'alive';
}

/** how a line of `reapOrphans` is reported: removing a dead driver's containers is routine (info) */
export function reapLevel(line: string): 'info' | 'warning' {
  return line.startsWith('removed ') ? 'info' : 'warning';
}

/**
 * Removes the containers of this host's dead drivers on every endpoint; returns one line per
 * endpoint that had any, and one note per endpoint with containers it may not judge.
 */
export async function reapOrphans(
  engine: DockerEngine,
  endpoints: Endpoint[],
  signal: AbortSignal,
  verdict: (label: string | undefined) => OrphanVerdict = orphanVerdict,
): Promise<string[]> {
  const lines: string[] = [];
  await Promise.all(
    [...new Set(endpoints)].map(async (ep) => {
      const names = (await engine.names(ep, 'sflow-p', signal).catch(() => [])).filter(
        (n) => driverPid(n) !== undefined,
      );
      if (names.length === 0) return;
      const labels = await engine.labels(ep, names, DRIVER_LABEL, signal).catch(() => undefined);
      if (!labels) return; // unknown: nothing is removed on a guess
      const by = new Map<OrphanVerdict, string[]>();
      for (const n of names) {
        if (!labels.has(n)) continue; // removed since the listing
        const v = verdict(labels.get(n) || undefined);
        const group = by.get(v);
        if (group) group.push(n);
        else by.set(v, [n]);
      }
      const on = ep ? ` on ${ep}` : '';
      const dead = by.get('reap') ?? [];
      if (dead.length) {
        const r = await engine.rm(ep, dead, signal);
        lines.push(
          `${r.ok ? 'removed' : 'could not remove'} ${dead.length} container(s) of dead sflow drivers${on}: ${dead.join(', ')}${r.ok ? '' : ` (${describe(r)})`}`,
        );
      }
      const elsewhere = by.get('elsewhere') ?? [];
      if (elsewhere.length) {
        const hosts = [...new Set(elsewhere.map((n) => parseDriverId(labels.get(n))?.host))].join(', ');
        lines.push(
          `left ${elsewhere.length} container(s) of sflow drivers on other hosts (${hosts})${on} alone: ${elsewhere.join(', ')}`,
        );
      }
      const unlabelled = by.get('unlabelled') ?? [];
      if (unlabelled.length)
        lines.push(
          `left ${unlabelled.length} container(s) without an ${DRIVER_LABEL} label${on} alone (no proof their driver ended; \`${engine.program} rm -f\` them once it has): ${unlabelled.join(', ')}`,
        );
    }),
  );
  return lines;
}
