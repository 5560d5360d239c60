/**
 * Hides secret values in command lines before they are logged or traced: environment
 * assignments (`-e KEY=VALUE`, `--env KEY=VALUE`, `--env=KEY=VALUE`, `-eKEY=VALUE`, srun's
 * `--export=ALL,KEY=VALUE,...`), kubectl's `--from-literal=KEY=VALUE`, and the value
 * after flags named like a secret
 * (`--password`, `--token`, `--secret`, `--api-key`, ...). Keys stay visible so a trace
 * still says which variable was set.
 */

export const REDACTED = '***';

const ENV_FLAGS = new Set(['-e', '--env']);
const SECRET_FLAG = /^--?[\w-]*(password|passwd|token|secret|api[-_]?key|credential)s?$/i;

/** `KEY=VALUE` → `KEY=***`; anything without `=` is returned unchanged. */
function hideAssignment(s: string): string {
  const eq = s.indexOf('=');
  return eq < 0 ? s : `${s.slice(0, eq + 1)}${REDACTED}`;
}

export function redactArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (ENV_FLAGS.has(a) && i + 1 < args.length) {
      out.push(a, hideAssignment(args[++i]));
    } else if (SECRET_FLAG.test(a) && i + 1 < args.length) {
      out.push(a, REDACTED);
      i++;
    } else if (a.startsWith('--env=') || a.startsWith('--from-literal=')) {
      const eq = a.indexOf('=');
      out.push(a.slice(0, eq + 1) + hideAssignment(a.slice(eq + 1)));
    } else if (a.startsWith('--export=')) {
      out.push('--export=' + a.slice(9).split(',').map(hideAssignment).join(','));
    } else if (/^-e[A-Za-z_]\w*=/.test(a)) {
      out.push('-e' + hideAssignment(a.slice(2)));
    } else if (a.startsWith('--') && a.includes('=') && SECRET_FLAG.test(a.slice(0, a.indexOf('=')))) {
      out.push(hideAssignment(a));
    } else {
      out.push(a);
    }
  }
  return out;
}

/**
 * A URL safe to print: the password of `user:password@` and every query value are hidden
 * (presigned URLs and tokens travel there); scheme, host and path stay readable.
 */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url.replace(/\/\/([^/@:]*):[^/@]*@/, `//$1:${REDACTED}@`).replace(/\?.*$/, `?${REDACTED}`);
  }
  if (u.password) u.password = REDACTED;
  for (const k of [...u.searchParams.keys()]) u.searchParams.set(k, REDACTED);
  return u.toString().replace(/%2A%2A%2A/g, REDACTED);
}
