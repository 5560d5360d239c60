/** The message of anything thrown (an Error's message, else its string form): one helper instead of `(e as Error)` casts. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  // an Error from another realm (node:vm) is not `instanceof Error` here
  const message = typeof e === 'object' && e !== null && 'message' in e ? e.message : undefined;
  if (typeof message === 'string') return message;
  if (typeof e === 'string') return e;
  try {
    return JSON.stringify(e) ?? String(e);
  } catch {
    return String(e);
  }
}

/** The stack of an Error (for bugs), or its message. */
export function errorStack(e: unknown): string {
  return e instanceof Error ? (e.stack ?? e.message) : errorMessage(e);
}

/** The `code` of a Node system error (`ENOENT`, `EPERM`, …), if it has one (errors of other realms too). */
export function errorCode(e: unknown): string | undefined {
  const code = typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined;
  return typeof code === 'string' ? code : undefined;
}
