import type { ArgvBuilder } from './types.js';

/** `bash -c <script>` (backends.md §6.2). */
export const bashArgv: ArgvBuilder = ({ script }) => ['bash', '-c', script];
