/** `--set NAME=VALUE` and `--artifact NAME=URI` (spec config.md §2.5, §1.6.4). */
import { SflowError } from '../util/sflow-error.js';
import { didYouMean } from './errors.js';
import { isPlainObject } from './collections.js';
import { getOrigin, setOrigin, type EntryOrigin, type Origin, type PathSeg } from './source.js';

type Obj = Record<string, unknown>;

export interface SetOverride {
  key: string;
  raw: string;
  value: unknown;
  /** the value was inferred as a float (Python float, renders with a decimal point) */
  isFloat: boolean;
  /** a list value became the variable's domain (sweep re-targeting) */
  isDomain: boolean;
}

/** an integer sflow cannot hold exactly (beyond ±2^53) is refused rather than silently rounded */
function exactInt(n: number, raw: string): number {
  if (Number.isSafeInteger(n)) return n;
  throw new SflowError(
    'cli.int_range',
    `--set value '${raw}' holds an integer beyond ±2^53 (9007199254740991), where sflow cannot keep it exact`,
    { phase: 'usage', hint: 'pass it as text in a list or dict (JSON "…"), or use a smaller number' },
  );
}

function checkInts(v: unknown, raw: string): void {
  if (typeof v === 'number' && Number.isInteger(v)) exactInt(v, raw);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) checkInts(x, raw);
}

export function parseSetValue(raw: string): { value: unknown; isFloat: boolean } {
  const t = raw.trim();
  if (t.startsWith('[') || t.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(t) as unknown;
    } catch {
      value = undefined; // not JSON: fall through
    }
    if (value !== undefined) {
      checkInts(value, raw);
      return { value, isFloat: false };
    }
  }
  // like Python's int(): leading zeros and digit-group underscores are fine (`007` → 7, `1_000` → 1000)
  if (/^[-+]?\d+(_\d+)*$/.test(t))
    return { value: exactInt(parseInt(t.replace(/_/g, ''), 10), raw), isFloat: false };
  if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t) || /^[-+]?(inf|infinity|nan)$/i.test(t)) {
    const n = /inf/i.test(t) ? (t.startsWith('-') ? -Infinity : Infinity) : /nan/i.test(t) ? NaN : Number(t);
    return { value: n, isFloat: true };
  }
  const low = t.toLowerCase();
  if (low === 'true' || low === 'yes' || low === 'on') return { value: true, isFloat: false };
  if (low === 'false' || low === 'no' || low === 'off') return { value: false, isFloat: false };
  return { value: raw, isFloat: false };
}

function splitAssignment(arg: string, flag: string, what: string): [string, string] {
  const i = arg.indexOf('=');
  if (i <= 0) {
    throw new SflowError(
      'cli.bad_override',
      `Invalid ${what} override format '${arg}'. Expected ${flag === '--set' ? 'KEY=VALUE' : 'NAME=URI'}.`,
      { phase: 'usage', hint: `write it as ${flag} ${flag === '--set' ? 'NAME=value' : 'NAME=fs:///path'}` },
    );
  }
  return [arg.slice(0, i).trim(), arg.slice(i + 1)];
}

function namedItems(list: unknown): Obj[] {
  return Array.isArray(list) ? list.filter(isPlainObject) : [];
}

export function applySetOverrides(doc: Obj, args: string[]): SetOverride[] {
  const applied: SetOverride[] = [];
  for (const arg of args) {
    const [key, raw] = splitAssignment(arg, '--set', 'variable');
    const vars = namedItems(doc.variables);
    const v = vars.find((x) => x.name === key);
    if (!v) {
      const names = vars.map((x) => String(x.name));
      const dym = didYouMean(key, names);
      const wfVar =
        isPlainObject(doc.workflow) && namedItems(doc.workflow.variables).some((x) => x.name === key);
      throw new SflowError(
        'cli.set_unknown_variable',
        `Variable '${key}' specified in overrides is not defined in the configuration.`,
        {
          // the command line names what the recipe lacks, as --enable-task-monitor does: usage
          phase: 'usage',
          hint: wfVar
            ? `'${key}' is a workflow variable; --set only overrides top-level \`variables:\``
            : (dym ??
              (names.length
                ? `declared variables: ${names.join(', ')}`
                : 'the recipe declares no top-level variables')),
        },
      );
    }
    const { value, isFloat } = parseSetValue(raw);
    const origin: Origin = getOrigin(v) ?? { entries: new Map<PathSeg, EntryOrigin>() };
    setOrigin(v, origin);
    const prevValue = origin.entries.get('value');
    const at = { file: '--set', line: 1, col: arg.indexOf('=') + 2 };
    if (Array.isArray(value)) {
      v.domain = value;
      origin.entries.set('domain', { key: at, value: at });
      if (value.length > 0) {
        v.value = value[0];
        origin.entries.set('value', {
          key: prevValue?.key ?? at,
          value: prevValue?.value ?? at,
          float: false,
        });
      }
      applied.push({ key, raw, value, isFloat: false, isDomain: true });
    } else {
      v.value = value;
      origin.entries.set('value', {
        key: prevValue?.key ?? at,
        value: prevValue?.value ?? at,
        float: isFloat,
      });
      applied.push({ key, raw, value, isFloat, isDomain: false });
    }
  }
  return applied;
}

export function applyArtifactOverrides(doc: Obj, args: string[]): { name: string; uri: string }[] {
  const applied: { name: string; uri: string }[] = [];
  for (const arg of args) {
    const [name, uri] = splitAssignment(arg, '--artifact', 'artifact');
    const arts = namedItems(doc.artifacts);
    const a = arts.find((x) => x.name === name);
    if (!a) {
      const names = arts.map((x) => String(x.name));
      throw new SflowError(
        'cli.artifact_unknown',
        `Artifact '${name}' specified in overrides is not defined in the configuration.`,
        {
          phase: 'usage',
          hint:
            didYouMean(name, names) ??
            (names.length ? `declared artifacts: ${names.join(', ')}` : 'the recipe declares no artifacts'),
        },
      );
    }
    const wasFile = typeof a.uri === 'string' && a.uri.startsWith('file://');
    a.uri = uri;
    if (wasFile && !uri.startsWith('file://')) delete a.content;
    applied.push({ name, uri });
  }
  return applied;
}
