import type { ArgvBuilder } from './types.js';

/** `bash -c <script>` (backends.md §6.2); `bash <file>` for a script too large for one argument. */
export const bashArgv: ArgvBuilder<'bash'> = ({ script, scriptFile }) =>
  scriptFile ? ['bash', scriptFile] : ['bash', '-c', script];
