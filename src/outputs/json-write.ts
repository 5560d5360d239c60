/**
 * JSON files the way sflow writes them: keys sorted at every level, 2-space indent, trailing
 * newline, written atomically (temp file in the same directory, then rename).
 *
 * Floats keep Python's look: a value parsed as a float is wrapped in PyFloat so `40.0`
 * is written `40.0` (not `40`), as `json.dumps` would.
 */
import { randomBytes } from 'node:crypto';
import { renameSync, writeFileSync, unlinkSync } from 'node:fs';
import { rename, writeFile, unlink } from 'node:fs/promises';

export class PyFloat {
  constructor(readonly value: number) {}
  toJSON(): number {
    return this.value;
  }
}

/** Python `repr(float)` for finite numbers; NaN/±Infinity as Python's json writes them. */
export function pyFloatText(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
  if (Number.isInteger(v) && Math.abs(v) < 1e16) return v.toFixed(1);
  const s = String(v); // JS: 1e+21, 1.5e-7; Python: 1e+21, 1.5e-07
  return s.replace(/e([+-])(\d)$/, 'e$10$2');
}

/** Plain JSON value (PyFloat → number), for events and in-memory use. */
export function toPlain(v: unknown): unknown {
  if (v instanceof PyFloat) return v.value;
  if (Array.isArray(v)) return v.map(toPlain);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toPlain(x);
    return out;
  }
  return v;
}

function render(v: unknown, indent: string, out: string[]): void {
  if (v instanceof PyFloat) {
    out.push(pyFloatText(v.value));
    return;
  }
  if (v === null || v === undefined) {
    out.push('null');
    return;
  }
  if (typeof v === 'number') {
    out.push(Number.isFinite(v) ? String(v) : pyFloatText(v));
    return;
  }
  if (typeof v === 'string' || typeof v === 'boolean') {
    out.push(JSON.stringify(v));
    return;
  }
  const inner = indent + '  ';
  if (Array.isArray(v)) {
    if (v.length === 0) return void out.push('[]');
    out.push('[\n');
    v.forEach((x, i) => {
      out.push(inner);
      render(x, inner, out);
      out.push(i < v.length - 1 ? ',\n' : '\n');
    });
    out.push(indent + ']');
    return;
  }
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  if (keys.length === 0) return void out.push('{}');
  out.push('{\n');
  keys.forEach((k, i) => {
    out.push(inner, JSON.stringify(k), ': ');
    render(obj[k], inner, out);
    out.push(i < keys.length - 1 ? ',\n' : '\n');
  });
  out.push(indent + '}');
}

/** Sorted-keys, 2-space JSON text with a trailing newline. */
export function stableJson(v: unknown): string {
  const out: string[] = [];
  render(v, '', out);
  out.push('\n');
  return out.join('');
}

const tmpName = (path: string) => `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;

export async function writeJsonAtomic(path: string, v: unknown): Promise<void> {
  const tmp = tmpName(path);
  try {
    await writeFile(tmp, stableJson(v));
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

export function writeJsonAtomicSync(path: string, v: unknown): void {
  const tmp = tmpName(path);
  try {
    writeFileSync(tmp, stableJson(v));
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw e;
  }
}
