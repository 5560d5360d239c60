/**
 * Scripts too large for one command-line argument. Linux caps a single argument at 128 KiB
 * (MAX_ARG_STRLEN), so `bash -c <script>` of a 150 KB script fails with E2BIG before anything
 * runs. Above SCRIPT_ARG_LIMIT, operators that can (bash, python) run the script from a file in the
 * task's output folder instead, which the run writes before any task starts; the dry-run shows
 * that exact command. Smaller scripts keep the spec's `bash -c <script>` (visible in `ps`, no file).
 */

/** bytes of script above which it is run from a file */
export const SCRIPT_ARG_LIMIT = 64 * 1024;
/** the kernel's limit of one argument (MAX_ARG_STRLEN, including the terminating NUL) */
export const KERNEL_ARG_LIMIT = 128 * 1024 - 1;

export function scriptTooLargeForArgv(script: string, limit = SCRIPT_ARG_LIMIT): boolean {
  return script.length > limit / 4 && Buffer.byteLength(script, 'utf8') > limit;
}
