import type { ArgvBuilder } from './types.js';

/**
 * `<python_exec> <extra_args…> -c <script>` (backends.md §6.5); `<python_exec> <extra_args…> <file>`
 * for a script too large for one argument.
 */
export const pythonArgv: ArgvBuilder<'python'> = ({ config, script, scriptFile }) => [
  String(config.python_exec ?? 'python'),
  ...(config.extra_args ?? []).map(String),
  ...(scriptFile ? [scriptFile] : ['-c', script]),
];
