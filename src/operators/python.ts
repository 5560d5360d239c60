import type { ArgvBuilder } from './types.js';

/** `<python_exec> <extra_args…> -c <script>` (backends.md §6.5). */
export const pythonArgv: ArgvBuilder = ({ config, script }) => [
  String(config.python_exec ?? 'python'),
  ...((config.extra_args as string[] | undefined) ?? []).map(String),
  '-c',
  script,
];
