/**
 * What a task pod runs. The operator's command is `<interpreter> -c <script>` (`bash -lc` for
 * k8s operators); the script goes into the attempt's ConfigMap as /sflow/run/task.sh, so no
 * script text reaches a pod's command line, and the container runs
 *
 *   sh -c 'mkdir -p "$SFLOW_TASK_OUTPUT_DIR"; exec "$@"' sflow <interpreter> /sflow/run/task.sh
 *
 * (the task dir exists before the script; `exec` makes the interpreter PID 1, so it gets the
 * pod's SIGTERM itself). For single-pod shell tasks with output collect on, task.sh starts with
 * an EXIT trap (backends.md §5.5): it stages the files under $SFLOW_WORKFLOW_OUTPUT_DIR (files
 * above the size cap are skipped with a note) in a tarball, announces it on the log, and keeps the
 * container up until the driver has copied it (or `collect_grace_seconds` passed), then exits with
 * the script's exit code.
 */
import { shellQuote } from '../../operators/ssh.js';

export interface Interpreted {
  /** interpreter and its flags without `-c` (`bash -l`) */
  interpreter: string[];
  script: string;
}

/** `[..., '-c' | '-lc' | '-ec', script]` → interpreter + script; null for any other command */
export function splitCommand(argv: string[]): Interpreted | null {
  if (argv.length < 3) return null;
  const flag = argv[argv.length - 2];
  const m = /^-([a-zA-Z]*)c([a-zA-Z]*)$/.exec(flag);
  if (!m) return null;
  const rest = m[1] + m[2];
  return {
    interpreter: [...argv.slice(0, -2), ...(rest ? [`-${rest}`] : [])],
    script: argv[argv.length - 1],
  };
}

export const COLLECT_MARKER = /^\[sflow\] (\d+) output file\(s\) staged in (\S+), awaiting driver copy/m;

export interface CollectSpec {
  graceS: number;
  /** bytes; 0 = no cap */
  maxBytes: number;
}

/** Directory (inside the pod's output emptyDir, outside the run dir) the trap stages in. */
export function stageDir(outputRoot: string, pod: string): string {
  return `${outputRoot.replace(/\/+$/, '')}/.sflow-collect/${pod}`;
}

/** The EXIT trap that stages outputs for the driver's copy. */
export function collectTrap(c: CollectSpec, stage: string): string {
  const cap = Math.max(0, Math.floor(c.maxBytes));
  const grace = Math.max(0, Math.ceil(c.graceS));
  const q = shellQuote(stage);
  return [
    '__sflow_collect() {',
    '  __sflow_rc=$?',
    '  trap - EXIT',
    '  __sflow_d="${SFLOW_WORKFLOW_OUTPUT_DIR:-}"',
    '  if [ -n "$__sflow_d" ] && [ -d "$__sflow_d" ] && command -v tar >/dev/null 2>&1; then',
    `    mkdir -p ${q} && cd "$__sflow_d" && {`,
    cap > 0
      ? `      find . -type f -size +${cap}c 2>/dev/null | while IFS= read -r f; do echo "[sflow] not collected (larger than collect_max_file_size=${cap} bytes): $f"; done`
      : '      :',
    `      find . -type f ${cap > 0 ? `! -size +${cap}c ` : ''}2>/dev/null > ${q}/list`,
    `      __sflow_n=$(wc -l < ${q}/list | tr -d ' ')`,
    `      if [ "$__sflow_n" -gt 0 ] && tar -cf ${q}/out.tar -T ${q}/list 2>/dev/null; then`,
    `        echo "[sflow] $__sflow_n output file(s) staged in ${stage}/out.tar, awaiting driver copy (up to ${grace}s)"`,
    '        __sflow_i=0',
    `        while [ ! -e ${q}/done ] && [ "$__sflow_i" -lt ${grace} ]; do sleep 1; __sflow_i=$((__sflow_i + 1)); done`,
    `        [ -e ${q}/done ] || echo "[sflow] the driver did not copy the outputs within ${grace}s (collect_grace_seconds); leaving without them" >&2`,
    '      fi',
    '    }',
    '  fi',
    '  exit "$__sflow_rc"',
    '}',
    'trap __sflow_collect EXIT',
    '',
  ].join('\n');
}

/** the container command for an interpreted script in /sflow/run/<file> (or the argv as it is) */
export function containerCommand(argv: string[], file: string): string[] {
  const split = splitCommand(argv);
  const run = split ? [...split.interpreter, file] : argv;
  return ['sh', '-c', 'mkdir -p "$SFLOW_TASK_OUTPUT_DIR" 2>/dev/null; exec "$@"', 'sflow', ...run];
}
