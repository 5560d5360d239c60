/**
 * YAML text → plain JS values, registering the source position of every key and value
 * (see source.ts). YAML 1.1 scalars like PyYAML (`yes`/`on` are booleans, as recipes written for
 * the original tool expect), except that `H:MM:SS` stays a string (nv-sflow 0.3.2 behaviour).
 */
import {
  Composer,
  isAlias,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  Parser,
  YAMLParseError,
  type Document,
  type Node,
  type Scalar,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { SflowError, type SourceLocation } from '../util/sflow-error.js';
import { setOrigin, type EntryOrigin, type Origin } from './source.js';
import { isPlainObject } from './collections.js';
import { errorCode, errorMessage } from '../util/errors.js';
import { checkedLexemes, ConversionBudget, readBounded, YAML_LIMITS } from './yaml-limits.js';

const SEXAGESIMAL = /^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$/;
/** integer spellings of YAML 1.1 (decimal, octal, hex, binary); any other number was read as a float */
const INT_SOURCE = /^[-+]?(0b[01_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*)$/;
/** PyYAML's float spellings: a dot is required and an exponent needs its sign (`1e3` is text) */
const PY_FLOAT =
  /^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

/** a plain number scalar written as a float (e.g. `3.0`, which a JS number cannot tell from 3) */
function isFloatScalar(node: Node | null | undefined, value: unknown): boolean {
  return isScalar(node) && typeof value === 'number' && !INT_SOURCE.test(String(node.source ?? ''));
}

export interface ParsedFile {
  file: string;
  /** the document: a mapping (anything else is refused while parsing) */
  value: Record<string, unknown>;
  warnings: { message: string; location?: SourceLocation }[];
}

export function readYamlFile(file: string): ParsedFile {
  let text: string;
  try {
    text = readBounded(file);
  } catch (e) {
    if (e instanceof SflowError) throw e;
    const code = errorCode(e);
    throw new SflowError(
      'config.file_not_found',
      code === 'ENOENT' ? `configuration file not found: ${file}` : `cannot read ${file}: ${errorMessage(e)}`,
      { phase: 'load', hint: 'check the path given with -f/--file', exitCode: code === 'ENOENT' ? 2 : 1 },
    );
  }
  return parseYamlText(text, file);
}

/**
 * yaml's parseDocument (one document, later ones reported as its error), fed from the checked
 * lexemes: the text is lexed once, for the limits and the parser together.
 */
function parseChecked(text: string, lexemes: Iterable<string>, lc: LineCounter): Document.Parsed {
  const parser = new Parser(lc.addNewLine);
  const composer = new Composer({ version: '1.1', uniqueKeys: false, prettyErrors: false });
  function* tokens() {
    lc.addNewLine(0);
    for (const lexeme of lexemes) yield* parser.next(lexeme);
    yield* parser.end();
  }
  let doc: Document.Parsed | undefined;
  for (const d of composer.compose(tokens(), true, text.length)) {
    if (!doc) doc = d;
    else {
      const range: [number, number] = [d.range[0], d.range[1]];
      doc.errors.push(
        new YAMLParseError(
          range,
          'MULTIPLE_DOCS',
          'Source contains multiple documents; please use YAML.parseAllDocuments()',
        ),
      );
      break;
    }
  }
  return doc!;
}

/**
 * The value of a scalar as PyYAML would read it: sexagesimal numbers, floats it does not know and
 * timestamps stay text, y/n are strings; an integer beyond ±2^53 is refused (located).
 */
function scalarValue(node: Scalar, loc: (offset: number | undefined) => SourceLocation | undefined): unknown {
  const v = node.value;
  if (typeof v === 'number' && typeof node.source === 'string' && SEXAGESIMAL.test(node.source))
    return node.source;
  // floats PyYAML does not recognise (`1e3`, `1.0e3`, `-.5`, `-.nan`) stay text, as do timestamps
  if (
    typeof v === 'number' &&
    typeof node.source === 'string' &&
    !INT_SOURCE.test(node.source) &&
    !PY_FLOAT.test(node.source)
  )
    return node.source;
  if (v instanceof Date) return String(node.source);
  // PyYAML reads y/Y/n/N as strings (YAML 1.1 lists them as booleans; the original tool did not)
  if (typeof v === 'boolean' && node.type === 'PLAIN' && /^[yYnN]$/.test(String(node.source)))
    return String(node.source);
  if (
    (typeof v === 'bigint' || typeof v === 'number') &&
    INT_SOURCE.test(String(node.source ?? '')) &&
    !Number.isSafeInteger(Number(v))
  ) {
    throw new SflowError(
      'config.int_range',
      `integer ${String(node.source)} is beyond ±2^53 (9007199254740991), where sflow cannot keep it exact`,
      { phase: 'load', location: loc(node.range?.[0]), hint: "quote it ('…') to keep it as text" },
    );
  }
  return v;
}

type Locate = (offset: number | undefined) => SourceLocation | undefined;

export function parseYamlText(text: string, file: string): ParsedFile {
  const lc = new LineCounter();
  const loc: Locate = (offset) => {
    if (offset === undefined) return undefined;
    const p = lc.linePos(offset);
    return { file, line: p.line, col: p.col };
  };
  const doc = parseDocument(text, file, lc);
  if (doc.errors.length > 0) throw syntaxError(doc.errors, text, loc);
  const converter = new Converter(doc, text, file, lc, loc);
  const value = converter.convert(doc.contents, 0);
  if (value === null || value === undefined) {
    throw new SflowError('config.empty', `configuration file is empty: ${file}`, {
      phase: 'load',
      location: { file, line: 1, col: 1 },
      hint: 'a recipe needs at least a `workflow:` with a name and tasks',
    });
  }
  if (!isPlainObject(value)) {
    throw new SflowError(
      'config.not_mapping',
      'a recipe must be a YAML mapping (keys such as version, variables, workflow)',
      {
        phase: 'load',
        location: loc(doc.contents?.range?.[0]) ?? { file, line: 1, col: 1 },
        hint: 'start the file with `workflow:` (and optionally `version: "0.1"`, `variables:` …)',
      },
    );
  }
  return { file, value, warnings: converter.warnings };
}

/** The text checked against the limits and parsed into one YAML document (errors kept in it). */
function parseDocument(text: string, file: string, lc: LineCounter): Document.Parsed {
  const lexemes = checkedLexemes(text, file, (offset) => {
    // the line counter fills as the parser runs; before that, count lines here
    const before = text.slice(0, offset);
    const nl = before.lastIndexOf('\n');
    return { file, line: (before.match(/\n/g)?.length ?? 0) + 1, col: offset - nl };
  });
  try {
    return parseChecked(text, lexemes, lc);
  } catch (e) {
    // the YAML library recurses per nesting level; the lexer pass above should have stopped this
    if (!(e instanceof RangeError)) throw e;
    throw new SflowError('config.yaml_depth', 'YAML nesting is too deep', {
      phase: 'load',
      location: { file, line: 1, col: 1 },
      hint: 'flatten the structure',
    });
  }
}

/** The error for a document the YAML parser refused: its first error located, a few more as details. */
function syntaxError(errors: YAMLParseError[], text: string, loc: Locate): SflowError {
  const err = errors[0];
  if (err.message.startsWith('Maximum call stack size exceeded')) {
    return new SflowError('config.yaml_depth', 'YAML nesting is too deep', {
      phase: 'load',
      location: loc(err.pos[0]),
      hint: 'flatten the structure',
    });
  }
  // an error reported at the end of the input (unclosed bracket…) points at the last written character
  if (err.pos[0] >= text.trimEnd().length) err.pos[0] = Math.max(0, text.trimEnd().length - 1);
  const first = err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
  return new SflowError('config.yaml_syntax', `invalid YAML: ${first}`, {
    phase: 'load',
    location: loc(err.pos[0]),
    hint: yamlHint(err.code),
    details: errors.slice(1, 5).map((e) => ({
      message: e.message.split('\n')[0],
      location: loc(e.pos[0]),
    })),
  });
}

/** The node of a pair's key or value, or of a sequence item (null when empty). */
function nodeOf(v: unknown): Node | null {
  return isNode(v) ? v : null;
}

/** YAML nodes → plain values, recording where each key and value was written (setOrigin). */
class Converter {
  readonly warnings: ParsedFile['warnings'] = [];
  private readonly budget = new ConversionBudget();
  /** where the outermost alias being expanded is (values it produces are charged to it) */
  private viaAlias: number | undefined;

  constructor(
    private readonly doc: Document.Parsed,
    private readonly text: string,
    private readonly file: string,
    private readonly lc: LineCounter,
    private readonly loc: Locate,
  ) {}

  convert(node: Node | null | undefined, depth: number): unknown {
    if (node === null || node === undefined) return null;
    if (depth > YAML_LIMITS.maxDepth)
      throw new SflowError(
        'config.yaml_depth',
        `YAML nesting is too deep (more than ${YAML_LIMITS.maxDepth} levels)`,
        { phase: 'load', location: this.loc(node.range?.[0]), hint: 'flatten the structure' },
      );
    this.budget.node(() => this.loc(this.viaAlias ?? node.range?.[0]));
    if (isAlias(node)) {
      this.budget.alias(() => this.loc(node.range?.[0]));
      const outer = this.viaAlias === undefined;
      if (outer) this.viaAlias = node.range?.[0];
      try {
        return this.convert(node.resolve(this.doc), depth + 1);
      } finally {
        if (outer) this.viaAlias = undefined;
      }
    }
    if (isScalar(node)) return scalarValue(node, this.loc);
    if (isMap(node)) return this.convertMap(node, depth);
    if (isSeq(node)) return this.convertSeq(node, depth);
    return null;
  }

  private convertMap(node: YAMLMap, depth: number): Record<string, unknown> {
    const loc = this.loc;
    const out: Record<string, unknown> = {};
    const origin: Origin = { self: loc(node.range?.[0]), entries: new Map() };
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const keyNode = nodeOf(pair.key);
      // keys are names: keep the text as written (`N:` is the name N, not the boolean false)
      const rawKey = isScalar(keyNode)
        ? keyNode.type === 'PLAIN' && typeof keyNode.source === 'string'
          ? keyNode.source
          : keyNode.value
        : this.convert(keyNode, depth + 1);
      const key = rawKey === null ? 'null' : String(rawKey);
      if (key === '<<') continue; // merge keys are not part of the recipe language
      if (Object.hasOwn(out, key)) {
        this.warnings.push({
          message: `duplicate key '${key}': the later value wins`,
          location: loc(keyNode?.range?.[0]),
        });
      }
      const valueNode = nodeOf(pair.value);
      const value = this.convert(valueNode, depth + 1);
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      const entry: EntryOrigin = {
        key: loc(keyNode?.range?.[0]),
        value: loc(valueNode?.range?.[0] ?? keyNode?.range?.[1]),
      };
      this.describe(entry, valueNode, value);
      origin.entries.set(key, entry);
    }
    setOrigin(out, origin);
    return out;
  }

  private convertSeq(node: YAMLSeq, depth: number): unknown[] {
    const out: unknown[] = [];
    const origin: Origin = { self: this.loc(node.range?.[0]), entries: new Map() };
    node.items.forEach((item, i) => {
      const n = nodeOf(item);
      const value = this.convert(n, depth + 1);
      out.push(value);
      const entry: EntryOrigin = { value: this.loc(n?.range?.[0]) };
      this.describe(entry, n, value);
      origin.entries.set(i, entry);
    });
    setOrigin(out, origin);
    return out;
  }

  /** Marks an entry written as a float, and where its text starts when that maps onto the source. */
  private describe(entry: EntryOrigin, node: Node | null, value: unknown): void {
    if (isFloatScalar(node, value)) entry.float = true;
    const t = this.textStart(node);
    if (t) entry.text = t;
  }

  /** where the characters of a string scalar start, when they map one to one onto the source */
  private textStart(node: Node | null | undefined): SourceLocation | undefined {
    if (!isScalar(node) || typeof node.value !== 'string' || !node.range) return undefined;
    if (node.type === 'PLAIN')
      return node.source === node.value && !node.value.includes('\n') ? this.loc(node.range[0]) : undefined;
    if (node.type !== 'BLOCK_LITERAL') return undefined;
    // content starts on the line after the `|` header, at the block's indentation (of its first non-blank line)
    const at = this.text.indexOf('\n', node.range[0]) + 1;
    if (at <= 0) return undefined;
    const indent = /^(?:[ ]*\r?\n)*([ ]*)/.exec(this.text.slice(at, node.range[1]))?.[1].length ?? 0;
    return { file: this.file, line: this.lc.linePos(at).line, col: indent + 1 };
  }
}

function yamlHint(code: string): string {
  switch (code) {
    case 'BAD_INDENT':
    case 'MISSING_CHAR':
      return 'check the indentation and that every [ { has its closing ] }';
    case 'TAB_AS_INDENT':
      return 'YAML indentation must use spaces, not tabs';
    case 'BLOCK_AS_IMPLICIT_KEY':
    case 'MULTILINE_IMPLICIT_KEY':
      return 'a line with ": " inside a list item is read as a key; quote the whole line';
    case 'DUPLICATE_KEY':
      return 'remove one of the duplicated keys';
    default:
      return 'quote strings that contain ": ", "#", "{" or start with special characters';
  }
}
