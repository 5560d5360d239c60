/**
 * The one sanitiser for folder and file names made from user text — workflow names (the run
 * folder), task names and sweep values (task folders and logs):
 *
 * - `/`, `\`, NUL and other control characters (C0, DEL, C1, line/paragraph separators) → `_`;
 * - leading dots → `_` (no `.`, `..` or hidden folders);
 * - at most 120 bytes of UTF-8 (room for `<name>.log` and suffixes within the 255-byte limit).
 *
 * A name that had to change ends in `-` and 8 hex digits of the SHA-256 of the original, so the
 * result is stable (the same name always maps to the same folder) and two names that sanitise
 * alike still get different folders. A name that needs no change is used as it is.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';

export const MAX_FOLDER_NAME_BYTES = 120;

const PLAIN = /^[A-Za-z0-9_+=,@:-][A-Za-z0-9_.+=,@:-]*$/;
const UNSAFE = /[\p{Cc}\u2028\u2029/\\]/gu;

/** the longest prefix of `s` that fits in `bytes` bytes of UTF-8, never splitting a character */
function fit(s: string, bytes: number): string {
  let used = 0;
  let out = '';
  for (const ch of s) {
    const n = Buffer.byteLength(ch);
    if (used + n > bytes) break;
    used += n;
    out += ch;
  }
  return out;
}

/** `name` made safe as one folder or file name of at most `maxBytes` bytes (see above). */
export function folderName(name: string, maxBytes = MAX_FOLDER_NAME_BYTES): string {
  // the common case (plain ASCII, no leading dot, short): nothing to change
  if (name.length <= maxBytes && PLAIN.test(name)) return name;
  const safe = name.replace(UNSAFE, '_').replace(/^\.+/, (dots) => '_'.repeat(dots.length));
  if (safe === name && safe !== '' && Buffer.byteLength(safe) <= maxBytes) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${fit(safe, maxBytes - 9)}-${hash}`;
}

/**
 * `name => join(dir, name)` for names that are one plain path segment — what `folderName` returns,
 * and such a name plus a suffix (`.log`) — without path.join's normalisation per call (a plan of
 * 10,000 replicas makes three paths each): `dir` is normalised once, with its trailing separator.
 */
export function childPath(dir: string): (name: string) => string {
  const prefix = join(dir, '_').slice(0, -1);
  return (name) => prefix + name;
}
