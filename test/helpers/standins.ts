/**
 * The stand-ins (test/fixtures/standins: an OpenAI-compatible server in its vLLM, SGLang,
 * TensorRT-LLM and Dynamo roles, etcd, NATS, AIPerf, mpirun, nbody — POSIX sh + busybox) and
 * what the sample runs share: the shipped samples' folder, PATH with the stand-ins first (and the
 * fake nvidia-smi where GPUs are asked for), distinct free ports, and reading a run's results.
 * Without busybox the stand-ins cannot run: `standinsMissing()` says so (tests skip with it,
 * or fail under SFLOW_REQUIRE_ENGINES=1).
 */
import { freePorts } from './free-ports.js';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEventsJsonl } from '../../src/reporters/events-jsonl.js';
import { REPO } from './cli.js';

export const STANDINS = join(REPO, 'test', 'fixtures', 'standins');
export const STANDIN_BIN = join(STANDINS, 'bin');
export const FAKE_SMI_BIN = join(REPO, 'assets', 'test-bin');
export const SAMPLES = join(REPO, 'assets', 'samples');
export const MODULAR = join(SAMPLES, 'modular', 'backend_agnostic');
export const required = process.env.SFLOW_REQUIRE_ENGINES === '1';

export const sample = (rel: string): string => join(SAMPLES, 'self_contained', `${rel}.yaml`);

/** Why the stand-ins cannot run here (undefined when they can). */
export function standinsMissing(): string | undefined {
  try {
    execFileSync('busybox', ['true'], { stdio: 'ignore', timeout: 10_000 });
    return undefined;
  } catch {
    return 'the stand-ins need busybox on PATH (apt-get install busybox-static)';
  }
}

/** `env` with the stand-ins first on PATH; `fakeGpus`: the fake nvidia-smi with that many GPUs too */
export function standinEnv(
  env: NodeJS.ProcessEnv = process.env,
  o: { fakeGpus?: number } = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  const dirs = [STANDIN_BIN, ...(o.fakeGpus !== undefined ? [FAKE_SMI_BIN] : [])];
  out.PATH = [...dirs, env.PATH ?? '/usr/bin:/bin'].join(':');
  if (o.fakeGpus !== undefined) out.FAKE_NVIDIA_SMI_GPUS = String(o.fakeGpus);
  return out;
}

export { freePorts };

/** `-s NAME=port` for each name, each a distinct free port */
export async function portArgs(...names: string[]): Promise<string[]> {
  const ports = await freePorts(names.length);
  return names.flatMap((n, i) => ['-s', `${n}=${ports[i]}`]);
}

/** `-s` pairs from an object */
export const sets = (vars: Record<string, string | number>): string[] =>
  Object.entries(vars).flatMap(([k, v]) => ['-s', `${k}=${v}`]);

/** the parsed values of a task's result.json */
export function resultValues(runDir: string, task: string): Record<string, unknown> {
  const doc = JSON.parse(readFileSync(join(runDir, task, 'result.json'), 'utf8')) as {
    values: Record<string, unknown>;
  };
  return doc.values;
}

/** The composition of a modular run: backend + (Dynamo services) + workload + benchmark. */
export function modularFiles(backend: string, workload: string, benchmark = true): string[] {
  return [
    join(MODULAR, 'backends', `${backend}.yaml`),
    ...(workload.startsWith('dynamo_') ? [join(MODULAR, 'workloads', 'dynamo_common.yaml')] : []),
    join(MODULAR, 'workloads', `${workload}.yaml`),
    ...(benchmark ? [join(MODULAR, 'benchmark.yaml')] : []),
  ];
}

/** the server tasks of a modular workload */
export const modularServers = (workload: string): string[] =>
  workload.endsWith('_disagg') ? ['prefill_server', 'decode_server'] : ['server'];

/** the ports a modular workload listens on (its own and, for Dynamo, the shared services') */
export function modularPortNames(workload: string): string[] {
  if (!workload.startsWith('dynamo_')) return ['HTTP_PORT'];
  const workers = workload.endsWith('_disagg')
    ? ['PREFILL_SYSTEM_PORT', 'DECODE_SYSTEM_PORT']
    : ['WORKER_SYSTEM_PORT'];
  return ['HTTP_PORT', 'ETCD_PORT', 'ETCD_PEER_PORT', 'NATS_PORT', ...workers];
}

/**
 * Processes of a run still alive on this machine: those whose environment names the run's
 * folder (SFLOW_WORKFLOW_OUTPUT_DIR) — a task's shell, a stand-in server, an nc listener —
 * wherever they ran (local, Slurm steps, emulator pods, containers of the local engines). Polled
 * until there are none or `ms` pass (a cancelled Slurm step is killed a few seconds later).
 */
export async function processesOf(runDir: string, ms = 20_000): Promise<string[]> {
  const needle = `SFLOW_WORKFLOW_OUTPUT_DIR=${runDir}\0`;
  const end = Date.now() + ms;
  for (;;) {
    const left: string[] = [];
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        if (!readFileSync(`/proc/${pid}/environ`, 'latin1').includes(needle)) continue;
        const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
        if (/\) Z /.test(stat)) continue; // a zombie: gone, waiting for a late reaper
        left.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'latin1').replace(/\0/g, ' ').trim()}`);
      } catch {
        /* gone meanwhile, or not ours to read */
      }
    }
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * The probes gated the client: every server of `servers` was READY (the driver saw its readiness
 * probe pass) before `client` was submitted. Returns the servers that were not (none when gated).
 */
export function notReadyBefore(runDir: string, client: string, servers: string[]): string[] {
  const events = parseEventsJsonl(readFileSync(join(runDir, 'events.jsonl'), 'utf8'));
  const submitted = events.find((e) => e.type === 'task_submitted' && e.task === client)?.t;
  if (submitted === undefined) return [...servers, `(${client} never submitted)`];
  return servers.filter(
    (s) => !events.some((e) => e.type === 'task_ready' && e.task === s && e.t <= submitted),
  );
}

/**
 * The stand-ins' state folders (`sflow-standin.*`) in this process's temp folder and in /tmp
 * (where pods and steps without TMPDIR make them). A run leaves none: compare before and after.
 */
export function standinStateDirs(): string[] {
  const out = new Set<string>();
  for (const root of new Set([tmpdir(), '/tmp']))
    try {
      for (const d of readdirSync(root)) if (d.startsWith('sflow-standin.')) out.add(join(root, d));
    } catch {
      /* no such folder */
    }
  return [...out];
}

/** a state folder with what it holds (the role's files say which server left it) */
function describeState(dir: string): string {
  try {
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
    return `${dir} holding [${files.join(', ')}]`;
  } catch {
    return `${dir} (removed while listed)`;
  }
}

/** state folders made since `before` (polled until none or `ms` pass: a stopped server cleans up last) */
export async function newStandinState(before: string[], ms = 10_000): Promise<string[]> {
  const end = Date.now() + ms;
  for (;;) {
    const left = standinStateDirs().filter((d) => !before.includes(d));
    if (left.length === 0 || Date.now() > end) return left.map(describeState);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** a small, quick benchmark: 2 streams x 2 rounds of 8 tokens, readiness checked every second */
export const QUICK_BENCH = sets({ ISL: 16, OSL: 8, CONCURRENCY: 2, ROUNDS: 2, PROBE_INTERVAL: 1 });
