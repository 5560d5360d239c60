/**
 * Everything a recipe or the command line can ask for that this version plans but does not run
 * yet — one row per feature. A real run refuses a `refuse` row before anything is allocated
 * (located, naming the feature) and prints a loud warning for a `warn` row; `--dry-run` still
 * prints the plan and lists both under Warnings. No run exits 0 having skipped something.
 *
 * When a feature lands, delete its row (one entry of NOT_YET). test/unit/plan/not-yet.test.ts
 * checks that every recipe field, CLI flag and artifact scheme is either implemented or covered
 * by a row here, and that README's "What runs today" table agrees with this one;
 * test/unit/repo/docs-not-yet.test.ts, that no doc calls something "not yet" that runs, or the reverse.
 */
import type { LoadedRecipe } from '../config/load.js';
import { formatLocation, type SourceLocation } from '../util/sflow-error.js';
import { locate, type PathSeg } from '../config/source.js';
import { offloadAsked, offloadBlocked } from '../operators/docker-run.js';
import type { Plan, PlannedBackend } from './types.js';
import { backendField } from './backends.js';
import { ownField } from '../util/own-field.js';
import type { Backend as BackendEntry } from '../config/schema/backends.js';
import type { Task } from '../config/schema/index.js';
import type { CliOptionBag } from '../util/cli-options.js';

export interface NotYetContext {
  plan: Plan;
  loaded: Pick<LoadedRecipe, 'recipe' | 'doc'>;
  /** `sflow run` options as commander parsed them (camelCase keys) */
  options: CliOptionBag;
}

export interface NotYetFinding {
  row: NotYetRow;
  /** where in the recipe (absent for a command-line flag) */
  location?: SourceLocation;
  /** what was used: a field path or a flag */
  what: string;
  message: string;
}

export interface NotYetRow {
  id: string;
  /** the feature, as README's "What runs today" table names it */
  feature: string;
  /** README status: the dry-run shows its plan, or nothing is done with it at all */
  today: 'plans only' | 'not yet' | 'ignored';
  action: 'refuse' | 'warn';
  /** recipe fields (`workflow.tasks.*.monitor`), flags (`--tui`) and artifact schemes (`hf://`) covered */
  covers: string[];
  /** the text after "<what>: " for each use */
  says: string;
  /** the uses of the feature in a plan and the command line: [what, recipe path or undefined] */
  find(ctx: NotYetContext): Array<[string, PathSeg[] | undefined]>;
}

const tasksOf = (ctx: NotYetContext): readonly Task[] => ctx.loaded.recipe.workflow?.tasks ?? [];

/** `workflow.tasks[i].<key>` for every declared task that has the key */
function taskField(ctx: NotYetContext, key: string): Array<[string, PathSeg[]]> {
  return tasksOf(ctx).flatMap((t, i): Array<[string, PathSeg[]]> =>
    ownField(t, key) === undefined || ownField(t, key) === null
      ? []
      : [[`workflow.tasks[${i}].${key}`, ['workflow', 'tasks', i, key]]],
  );
}

/** a command-line flag in use (for rows that cover flags) */
export function flag(ctx: NotYetContext, key: string, name: string): Array<[string, undefined]> {
  const v = ctx.options[key];
  return v === undefined || v === false || (Array.isArray(v) && v.length === 0) ? [] : [[name, undefined]];
}

/**
 * The planned backends whose kind names this row in its `notYet` capability, each with its
 * declaration in the recipe and that declaration's index (0 for the implicit default backend).
 */
function backendsOfRow(
  ctx: NotYetContext,
  row: string,
): Array<[PlannedBackend, BackendEntry | undefined, number]> {
  const declared = ctx.loaded.recipe.backends ?? [];
  return ctx.plan.backends.flatMap((b): Array<[PlannedBackend, BackendEntry | undefined, number]> => {
    if (!b.capabilities.notYet.includes(row)) return [];
    const i = declared.findIndex((d) => d.name === b.name);
    return [[b, declared[i], Math.max(0, i)]];
  });
}

/** `backends[i].<key>` of the backends the row concerns that set it (to `true` when `onlyTrue`) */
function backendFields(
  ctx: NotYetContext,
  row: string,
  keys: string[],
  onlyTrue = false,
  which: (b: PlannedBackend) => boolean = () => true,
): Array<[string, PathSeg[]]> {
  return backendsOfRow(ctx, row).flatMap(([b, , i]) =>
    !which(b)
      ? []
      : keys
          .filter((k) => {
            const v = backendField(b, k);
            return onlyTrue ? v === true : v !== undefined && v !== null;
          })
          .map((k): [string, PathSeg[]] => [`backend '${b.name}' ${k}`, ['backends', i, k]]),
  );
}

export const NOT_YET: NotYetRow[] = [
  {
    id: 'local-node-filters',
    feature: '`include_nodes` / `exclude_nodes` on one machine (local, or Docker with no host list)',
    today: 'ignored',
    action: 'warn',
    covers: [],
    says: 'this backend is this one machine (a Docker backend without hosts: is its one engine): there are no nodes to keep or drop, so this is ignored',
    find: (ctx) =>
      backendFields(ctx, 'local-node-filters', ['include_nodes', 'exclude_nodes'], false, (b) => {
        const hosts = backendField(b, 'hosts');
        return !(Array.isArray(hosts) && hosts.length > 0);
      }),
  },
  {
    id: 'docker-log-offload',
    feature:
      'Docker `offload_task_logs` / operator `log_to_file` where the container cannot write the log (pool host, multi-node task, `auto_mount_runtime_dirs: false`)',
    today: 'ignored',
    action: 'warn',
    covers: [],
    says: "the container's output streams through its attached client into the task log instead (the same file, byte for byte)",
    find: (ctx) => {
      const operators = ctx.loaded.recipe.operators ?? [];
      const backends = ctx.loaded.recipe.backends ?? [];
      const byName = new Map(ctx.plan.backends.map((b) => [b.name, b.config]));
      return ctx.plan.tasks.flatMap((t): Array<[string, PathSeg[]]> => {
        const bc = byName.get(t.backend) ?? {};
        if (t.operator.type !== 'docker_run' || !offloadAsked(t.operator.config, bc)) return [];
        if (t.launch[0]?.container?.logFile) return [];
        const why = offloadBlocked({
          ...t,
          config: t.operator.config,
          backendConfig: bc,
          logPath: t.logPath,
        });
        const own = t.operator.config.log_to_file !== undefined;
        const path: PathSeg[] = own
          ? [
              'operators',
              Math.max(
                0,
                operators.findIndex((o) => o.name === t.operator.name),
              ),
              'log_to_file',
            ]
          : [
              'backends',
              Math.max(
                0,
                backends.findIndex((b) => b.name === t.backend),
              ),
              'offload_task_logs',
            ];
        return [
          [`task '${t.name}' ${own ? 'log_to_file' : 'offload_task_logs'} (${why ?? 'not offloaded'})`, path],
        ];
      });
    },
  },
  {
    id: 'k8s-mpi-operator-route',
    feature:
      'Kubernetes `k8s_mpi` without `host_network` (the hostfile would need pod addresses through a headless Service and cluster DNS, which the test emulator does not serve, so it cannot be tested here)',
    today: 'plans only',
    action: 'refuse',
    covers: [],
    says: "this version's k8s_mpi (pods and MPIJob routes alike) writes the hostfile from the reserved nodes' addresses, which pod-network pods do not listen on; set host_network: true",
    find: (ctx) => {
      const declared = ctx.loaded.recipe.operators ?? [];
      const backends = new Map(ctx.plan.backends.map((b) => [b.name, b]));
      const out: Array<[string, PathSeg[]]> = [];
      const seen = new Set<string>();
      for (const t of ctx.plan.tasks) {
        if (t.operator.type !== 'k8s_mpi' || seen.has(t.operator.name)) continue;
        seen.add(t.operator.name);
        const i = Math.max(
          0,
          declared.findIndex((d) => d.name === t.operator.name),
        );
        const b = backends.get(t.backend);
        const hostNetwork =
          t.operator.config.host_network ?? (b ? backendField(b, 'host_network') : undefined);
        if (hostNetwork === false || hostNetwork === 'false')
          out.push([
            `operator '${t.operator.name}' (k8s_mpi) host_network`,
            ['operators', i, 'host_network'],
          ]);
      }
      return out;
    },
  },
  {
    id: 'k8s-mpi-mpijob-fields',
    feature:
      'Kubernetes `k8s_mpi` `launcher_creation_policy` / `launcher_discovery_timeout` with `mpi.route: pods`',
    today: 'ignored',
    action: 'warn',
    covers: [],
    says: 'these settings belong to the MPIJob route (route: operator, or auto where the CRD exists); the pods route starts the launcher with its workers and bounds their sshd start-up by worker_setup_timeout_seconds',
    find: (ctx) => {
      const declared = ctx.loaded.recipe.operators ?? [];
      return declared.flatMap((o, i): Array<[string, PathSeg[]]> => {
        const mpi = o.type === 'k8s_mpi' ? o.mpi : undefined;
        if (mpi?.route !== 'pods') return [];
        return ['launcher_creation_policy', 'launcher_discovery_timeout']
          .filter((k) => ownField(mpi, k) !== undefined)
          .map((k) => [`operator '${String(o.name)}' mpi.${k}`, ['operators', i, 'mpi', k]]);
      });
    },
  },
  {
    id: 'task-timeout',
    feature: 'task `timeout:`',
    today: 'ignored',
    action: 'warn',
    covers: ['workflow.tasks.*.timeout'],
    says: "a task's timeout is not enforced (as in nv-sflow 0.3); bound the whole run with workflow.timeout, or the task with `timeout <seconds> <command>` in its script",
    find: (ctx) => taskField(ctx, 'timeout'),
  },
  {
    id: 'task-variables',
    feature: 'task-level `variables:` (v0.2 schema)',
    today: 'ignored',
    action: 'warn',
    covers: ['workflow.tasks.*.variables'],
    says: 'task-level variables are accepted and ignored (as in nv-sflow); declare them under workflow.variables or the top-level variables',
    find: (ctx) => taskField(ctx, 'variables'),
  },
  {
    id: 'task-ports',
    feature: 'task `ports:` (advertised ports)',
    today: 'ignored',
    action: 'warn',
    covers: ['workflow.tasks.*.ports'],
    says: 'advertised ports are metadata only: sflow neither opens nor checks them (a tcp_port readiness probe checks a port)',
    find: (ctx) => taskField(ctx, 'ports'),
  },
];

/** Every use of a not-yet feature in this plan and command line, in table order. */
export function findNotYet(ctx: NotYetContext, rows: NotYetRow[] = NOT_YET): NotYetFinding[] {
  return rows.flatMap((row) =>
    row.find(ctx).map(([what, path]) => ({
      row,
      what,
      location: path ? locate(ctx.loaded.doc, path, true) : undefined,
      message: `${what}: ${row.says}`,
    })),
  );
}

/** `file:line:col: what: says` */
export function describeFinding(f: NotYetFinding): string {
  const at = formatLocation(f.location);
  return `${at ? `${at}: ` : ''}${f.message}`;
}
