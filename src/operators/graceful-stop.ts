/**
 * How a task's shell takes a stop (Slurm's `scancel --signal=TERM`, `docker stop`): the engine
 * signals the task's processes, and a shell without a TERM trap dies at once. Its step or
 * container then ends with it, and the engine SIGKILLs what is left: the task's server would get
 * no time to stop (deregister, flush, remove its files). With this first line bash lets its running
 * command (and, through `wait`, its background jobs) finish their own TERM handling, then exits
 * 143; sflow's KILL after the grace still ends anything that does not stop.
 */
export const TERM_TRAP_LINE = `trap 'wait; exit 143' TERM`;
