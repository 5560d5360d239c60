/**
 * The `k8s_mpi` launcher (pods and MPIJob routes): the preamble that runs before the recipe's
 * script, and the `mpirun` shim it puts first on PATH, in the launch style of the operator's
 * `mpi_implementation`. The preamble writes the hostfile of the node addresses (the launcher's own
 * node too unless `run_launcher_as_worker: false`), the shim waits for every worker's sshd (the
 * barrier, bounded by `worker_setup_timeout_seconds`) and then runs the image's real launcher with
 * the hostfile, the ssh transport (port, the attempt's key), the forwarded environment (PATH,
 * LD_LIBRARY_PATH, OMP_NUM_THREADS and the forwarded prefixes) and a per-rank CPU binding
 * (`cpu_bind`, only with more than one rank per pod and when the command sets none). So the
 * recipe's plain `mpirun -np N …` works wherever it sits in the script. An EXIT trap releases the
 * workers.
 *
 *  - OpenMPI: hostfile `<ip> slots=N`; `--hostfile`, `--mca plm_rsh_agent ssh --mca plm_rsh_args
 *    "<ssh options>"`, `-x NAME` per variable, `--map-by slot:PE=<n> --bind-to core` (or
 *    `--bind-to numa`).
 *  - MPICH (Hydra): hostfile `<ip>:N`; `-f`, `-launcher ssh -launcher-exec <ssh wrapper>` (Hydra
 *    takes a program, not options: the wrapper adds port and key), `-genvlist A,B,…`,
 *    `-bind-to core:<n>` (or `-bind-to numa`). The shim also answers to `mpiexec`.
 *  - Intel MPI (Hydra): hostfile `<ip>:N`; `-machinefile`, `-bootstrap ssh -bootstrap-exec <ssh
 *    wrapper>`, `-genvlist A,B,…`, pinning through `-genv I_MPI_PIN_DOMAIN <n>` (or `numa`) unless
 *    the command or the environment pins already. The shim also answers to `mpiexec`.
 */
import {
  FORWARD_PREFIXES,
  FORWARD_VARS,
  MPI_DIR,
  MPI_KEY_ENV,
  SSH_OPTS,
  common,
  type MpiSettings,
} from './mpi-pods.js';

type Flavour = 'OpenMPI' | 'MPICH' | 'Intel';

export const flavourOf = (m: MpiSettings): Flavour =>
  m.implementation === 'MPICH' || m.implementation === 'Intel' ? m.implementation : 'OpenMPI';

/** the ssh wrapper Hydra's launcher runs (`-launcher-exec` / `-bootstrap-exec`) */
export const SSH_WRAPPER = `${MPI_DIR}/bin/sflow-mpi-ssh`;

/** the forwarded variables' names, one per line of `env` matching the prefixes */
function forwardedNames(m: MpiSettings): string {
  const prefixes = [...new Set([...FORWARD_PREFIXES, ...m.forwardPrefixes])];
  const grep = `^(${prefixes.map((x) => x.replace(/[^A-Za-z0-9_]/g, '')).join('|')})[A-Za-z0-9_]*=`;
  return `${FORWARD_VARS.join(' ')} $(env | grep -oE '${grep}' | tr -d = | sort -u)`;
}

/** the real launcher (not this shim), by the name the shim was called with */
function findReal(self: string): string[] {
  return [
    '__real=${SFLOW_MPI_REAL_MPIRUN:-}',
    'if [ -z "$__real" ]; then',
    `  for __c in $(type -ap ${self}); do [ "$__c" != "$__d/bin/${self}" ] && { __real=$__c; break; }; done`,
    'fi',
    `[ -n "$__real" ] || { echo "[sflow-mpi] the image has no ${self}" >&2; exit 127; }`,
  ];
}

function barrier(m: MpiSettings): string[] {
  return [
    "# barrier: every worker's sshd takes the attempt's key",
    `__deadline=$(( $(date +%s) + ${Math.max(1, Math.round(m.workerSetupTimeoutS))} ))`,
    'for __ip in $(cat "$__d/workers"); do',
    `  until ssh ${SSH_OPTS(m.sshPort)} "$__ip" true 2>/dev/null; do`,
    '    if [ "$(date +%s)" -ge "$__deadline" ]; then',
    `      echo "[sflow-mpi] worker $__ip: no sshd on port ${m.sshPort} within ${m.workerSetupTimeoutS}s (worker_setup_timeout_seconds)" >&2; exit 1`,
    '    fi',
    '    sleep 1',
    '  done',
    'done',
  ];
}

/** cores per rank: min(cores / ranks per pod, cpu_bind_cores_per_rank) into __pe */
function coresPerRank(m: MpiSettings, slots: number): string[] {
  return [
    `  __pe=$(( $(nproc 2>/dev/null || echo 1) / ${slots} ))`,
    ...(m.cpuBindCap > 0 ? [`  [ "$__pe" -gt ${m.cpuBindCap} ] && __pe=${m.cpuBindCap}`] : []),
  ];
}

function openMpiShim(m: MpiSettings, slots: number): string {
  const bind =
    m.cpuBind === 'none' || slots <= 1
      ? []
      : [
          'case " $* " in *" --bind-to "*|*" -bind-to "*|*" --map-by "*|*" -map-by "*|*" --cpu-set "*) ;; *)',
          ...(m.cpuBind === 'numa'
            ? ['  __o+=(--bind-to numa) ;;']
            : [
                ...coresPerRank(m, slots),
                '  if [ "$__pe" -ge 1 ]; then __o+=(--map-by "slot:PE=$__pe" --bind-to core); fi ;;',
              ]),
          'esac',
        ];
  return [
    '#!/bin/bash',
    '# sflow k8s_mpi mpirun shim (pods route): hostfile, ssh transport, env forwarding, binding',
    `__d=${MPI_DIR}`,
    ...findReal('mpirun'),
    ...barrier(m),
    `__o=(--hostfile "$__d/hostfile" --mca plm_rsh_agent ssh --mca plm_rsh_args "${SSH_OPTS(m.sshPort)}")`,
    ...bind,
    `for __v in ${forwardedNames(m)}; do`,
    `  [ "$__v" = ${MPI_KEY_ENV} ] && continue`,
    '  [ -n "${!__v+x}" ] && __o+=(-x "$__v")',
    'done',
    'echo "[sflow-mpi] launch: mpirun ${__o[*]} $*" >&2',
    'exec "$__real" "${__o[@]}" "$@"',
    '',
  ].join('\n');
}

function hydraShim(m: MpiSettings, slots: number, flavour: 'MPICH' | 'Intel'): string {
  const intel = flavour === 'Intel';
  const transport = intel
    ? `__o=(-machinefile "$__d/hostfile" -bootstrap ssh -bootstrap-exec "$__d/bin/sflow-mpi-ssh")`
    : `__o=(-f "$__d/hostfile" -launcher ssh -launcher-exec "$__d/bin/sflow-mpi-ssh")`;
  const bound = intel
    ? 'case " $* " in *" I_MPI_PIN"*) ;; *) [ -n "${I_MPI_PIN_DOMAIN:-}" ] ||'
    : 'case " $* " in *" -bind-to "*|*" --bind-to "*|*" -map-by "*|*" --map-by "*|*" -binding "*) ;; *)';
  const pin = (what: string) =>
    intel ? `__o+=(-genv I_MPI_PIN_DOMAIN "${what}")` : `__o+=(-bind-to "${what}")`;
  const bind =
    m.cpuBind === 'none' || slots <= 1
      ? []
      : [
          intel ? `${bound} {` : bound,
          ...(m.cpuBind === 'numa'
            ? [`  ${pin('numa')}`]
            : [
                ...coresPerRank(m, slots),
                `  if [ "$__pe" -ge 1 ]; then ${pin(intel ? '$__pe' : 'core:$__pe')}; fi`,
              ]),
          intel ? '} ;;' : ';;',
          'esac',
        ];
  return [
    '#!/bin/bash',
    `# sflow k8s_mpi mpirun shim (${flavour}, Hydra): hostfile, ssh launcher, env forwarding, binding`,
    `__d=${MPI_DIR}`,
    '__me=${0##*/}',
    ...findReal('$__me'),
    ...barrier(m),
    transport,
    ...bind,
    "__l=''",
    `for __v in ${forwardedNames(m)}; do`,
    `  [ "$__v" = ${MPI_KEY_ENV} ] && continue`,
    '  [ -n "${!__v+x}" ] && __l+=${__l:+,}$__v',
    'done',
    '[ -n "$__l" ] && __o+=(-genvlist "$__l")',
    'echo "[sflow-mpi] launch: $__me ${__o[*]} $*" >&2',
    'exec "$__real" "${__o[@]}" "$@"',
    '',
  ].join('\n');
}

/** the `mpirun` shim the launcher puts first on PATH, in the implementation's style */
export function mpirunShim(m: MpiSettings, slots: number): string {
  const f = flavourOf(m);
  return f === 'OpenMPI' ? openMpiShim(m, slots) : hydraShim(m, slots, f);
}

/** Hydra flavours: the ssh wrapper and an `mpiexec` name for the shim */
function hydraExtras(m: MpiSettings): string[] {
  return [
    `cat > "$__sflow_mpi/bin/sflow-mpi-ssh" <<'SFLOW_MPI_SSH'`,
    '#!/bin/sh',
    `exec ssh ${SSH_OPTS(m.sshPort)} "$@"`,
    'SFLOW_MPI_SSH',
    'chmod 755 "$__sflow_mpi/bin/sflow-mpi-ssh"',
    'ln -sf mpirun "$__sflow_mpi/bin/mpiexec"',
  ];
}

/** the launcher's task.sh: preamble (hostfile, shim, release trap) + the recipe's script */
export function launcherScript(m: MpiSettings, slots: number, recipe: string): string {
  const f = flavourOf(m);
  const line = f === 'OpenMPI' ? `"$__ip slots=${slots}"` : `"$__ip:${slots}"`;
  return [
    `# ----- sflow k8s_mpi launcher (pods route${f === 'OpenMPI' ? '' : `, ${f}`}) -----`,
    ...common(),
    'set -- $__sflow_mpi_ips',
    `${m.runLauncherAsWorker ? '' : 'shift; '}for __ip in "$@"; do echo ${line}; done > "$__sflow_mpi/hostfile"`,
    'set -- $__sflow_mpi_ips; shift; printf \'%s\\n\' "$@" > "$__sflow_mpi/workers"',
    `cat > "$__sflow_mpi/bin/mpirun" <<'SFLOW_MPIRUN_SHIM'`,
    mpirunShim(m, slots).trimEnd(),
    'SFLOW_MPIRUN_SHIM',
    'chmod 755 "$__sflow_mpi/bin/mpirun"',
    ...(f === 'OpenMPI' ? [] : hydraExtras(m)),
    'export PATH="$__sflow_mpi/bin:$PATH"',
    'echo "[sflow-mpi] hostfile: $(tr \'\\n\' \' \' < "$__sflow_mpi/hostfile")"',
    '__sflow_mpi_release() {',
    '  __sflow_rc=$?',
    '  trap - EXIT',
    '  for __ip in $(cat "$__sflow_mpi/workers"); do',
    `    timeout 20 ssh ${SSH_OPTS(m.sshPort)} "$__ip" touch ${MPI_DIR}/done >/dev/null 2>&1 &`,
    '  done',
    '  wait',
    '  exit "$__sflow_rc"',
    '}',
    'trap __sflow_mpi_release EXIT',
    'set --',
    '# ----- the recipe -----',
    recipe,
  ].join('\n');
}
