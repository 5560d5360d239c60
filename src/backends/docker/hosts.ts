/**
 * The Docker backend's hosts: one local engine (the CLI's default endpoint; `nodes` synthetic
 * nodes on it) or a pool (`hosts:`, one engine per host reached as `ssh://[user@]address`). The
 * pre-flight checks every host at once (a bounded `docker version`, and that every bind-mount
 * source exists on that host) and reports every problem in one error, naming the hosts (§3.3).
 * Orphans of dead drivers are reaped on every host (../container-engine.ts, §3.5).
 */
import { existsSync } from 'node:fs';
import { SflowError } from '../../util/sflow-error.js';
import { CONTEXT_ENDPOINT, containerPrefix, hostEndpoint } from '../../operators/docker-run.js';
import type { BackendConfig, PlannedNode } from '../../plan/types.js';
import { boundedExec } from '../../util/bounded-exec.js';
import { errorMessage } from '../../util/errors.js';
import { describe, type DockerEngine, type Endpoint } from '../container-engine.js';
import { localEngineNodes } from './local-nodes.js';

export interface DockerHostRef {
  node: PlannedNode;
  endpoint: Endpoint;
  /**
   * ssh destination for file checks (`[user@]address`), pool hosts only; for a host reached
   * through a docker context, its endpoint's `ssh://…` URL once the pre-flight has read it
   */
  ssh?: string;
  /** a context host whose endpoint is neither ssh:// nor unix://: its files cannot be checked */
  filesUnreachable?: string;
  mounts: string[];
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

const num = (v: unknown): number | null => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};

/** The hosts of a backend config (pool) or its synthetic nodes on the one local engine. */
export function dockerHosts(config: BackendConfig<'docker'>, plannedCount: number): DockerHostRef[] {
  const hosts = config.hosts ?? [];
  const backendMounts = strings(config.mounts);
  if (hosts.length === 0) {
    const n = Math.max(1, plannedCount || num(config.nodes) || 1);
    return localEngineNodes(n, num(config.gpus_per_node)).map((node) => ({
      node,
      endpoint: undefined,
      mounts: backendMounts,
    }));
  }
  return hosts.map((h, i) => {
    const address = String(h.address ?? h.name);
    // a context host's ssh destination comes from its context (resolveContexts)
    const ssh =
      typeof h.context === 'string'
        ? undefined
        : `${typeof h.user === 'string' && h.user ? `${h.user}@` : ''}${address}`;
    return {
      node: {
        name: String(h.name ?? address),
        ip: String(h.rendezvous_address ?? h.ip_address ?? address),
        index: i,
        numGpus: num(h.gpus_per_node ?? config.gpus_per_node),
        ...(ssh ? { sshDestination: ssh } : {}),
      },
      endpoint: hostEndpoint(h),
      ssh,
      mounts: [...backendMounts, ...strings(h.mounts)],
    };
  });
}

const mountSource = (m: string): string | undefined => {
  const src = m.split(':')[0];
  return src.startsWith('/') ? src : undefined; // named volumes are the engine's business
};

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** bind-mount sources missing on a host (this machine for the local engine, over ssh for a pool host) */
async function missingSources(h: DockerHostRef, extra: string[], signal: AbortSignal): Promise<string[]> {
  const sources = [
    ...new Set([...h.mounts, ...extra].map(mountSource).filter((s): s is string => Boolean(s))),
  ];
  if (sources.length === 0 || h.filesUnreachable) return [];
  if (!h.ssh) return sources.filter((s) => !existsSync(s));
  const script = `for p in ${sources.map(shq).join(' ')}; do [ -e "$p" ] || echo "$p"; done`;
  const r = await boundedExec('ssh', ['-o', 'BatchMode=yes', h.ssh, script], { timeoutMs: 30_000, signal });
  if (!r.ok) throw new Error(`ssh ${h.ssh}: ${describe(r)}`);
  return r.stdout.split('\n').filter(Boolean);
}

/**
 * Hosts reached through a docker context (`context:<name>`): what the context points at, read
 * with a bounded `docker context inspect`. An `ssh://` endpoint gives the host its ssh
 * destination (mount checks, the hardware monitor); `unix://` is an engine on this machine
 * (checked here); any other endpoint cannot be reached for files (noted). Returns the problems.
 */
export async function resolveContexts(
  engine: DockerEngine,
  hosts: DockerHostRef[],
  signal: AbortSignal,
  note: (line: string) => void,
): Promise<string[]> {
  const problems: string[] = [];
  for (const h of hosts) {
    if (!h.endpoint?.startsWith(CONTEXT_ENDPOINT)) continue;
    const name = h.endpoint.slice(CONTEXT_ENDPOINT.length);
    const r = await engine.exec(
      undefined,
      ['context', 'inspect', '--format', '{{.Endpoints.docker.Host}}', name],
      signal,
      { timeoutMs: 15_000, retries: 1 },
    );
    const url = r.stdout.trim();
    if (!r.ok || !url) {
      problems.push(
        `host '${h.node.name}': docker context '${name}': ${r.ok ? 'no docker endpoint' : describe(r)}`,
      );
    } else if (url.startsWith('ssh://')) {
      h.ssh = url;
      h.node.sshDestination = url;
    } else if (!url.startsWith('unix://')) {
      h.filesUnreachable = url;
      note(
        `backend host '${h.node.name}': docker context '${name}' points at ${url}: its bind-mount sources are not checked and the hardware monitor does not sample it (both need ssh:// or a local unix:// engine)`,
      );
    }
  }
  return problems;
}

/** Every host checked at once; all problems in one error (phase 'preflight'). */
export async function preflightHosts(
  engine: DockerEngine,
  backend: string,
  hosts: DockerHostRef[],
  taskMounts: string[],
  signal: AbortSignal,
  note: (line: string) => void = () => undefined,
): Promise<void> {
  const contextProblems = await resolveContexts(engine, hosts, signal, note);
  const unique = [...new Map(hosts.map((h) => [h.endpoint ?? '', h])).values()];
  const problems = contextProblems.length
    ? contextProblems
    : (
        await Promise.all(
          unique.map(async (h): Promise<string[]> => {
            const where = h.endpoint ? `host '${h.node.name}' (${h.endpoint})` : `the local engine`;
            const v = await engine.version(h.endpoint, signal);
            if (!v.ok) return [`${where}: ${engine.program} version: ${describe(v)}`];
            try {
              const gone = await missingSources(h, taskMounts, signal);
              return gone.map((s) => `${where}: bind-mount source ${s} does not exist there`);
            } catch (e) {
              return [`${where}: cannot check bind-mount sources: ${errorMessage(e)}`];
            }
          }),
        )
      ).flat();
  signal.throwIfAborted();
  if (problems.length === 0) return;
  throw new SflowError(
    'DOCKER_PREFLIGHT',
    `backend '${backend}' (docker): ${problems.length} problem(s):\n  ${problems.join('\n  ')}`,
    {
      phase: 'preflight',
      hint: `check that '${engine.program} version' answers for every host (ssh must work non-interactively: keys, BatchMode), that every docker context named exists ('${engine.program} context ls') and that every mount source exists on the host it is mounted on`,
    },
  );
}

export { containerPrefix };
