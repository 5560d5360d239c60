/**
 * Bounds on a recipe file, so any input ends in a located error in bounded time and memory:
 * size, token count and nesting are checked by a streaming pass of the YAML lexer before the
 * document is built; the alias count and the size of what aliases expand to are checked while our
 * loader converts the document (it expands aliases itself, so the YAML library's own alias limit
 * does not apply). A recipe written for sflow is far below every limit: the largest real recipes
 * are ~12 KB / ~2,000 tokens, a 2,000-task recipe ~300 KB / ~100,000 tokens; the token bound admits
 * a generated recipe of 10,000 separate tasks (~1 MB, ~420,000 tokens: bench/scale-local.mjs).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { Lexer } from 'yaml';
import { SflowError, type SourceLocation } from '../util/sflow-error.js';

export const YAML_LIMITS = {
  /** bytes of one recipe file */
  maxBytes: 4 * 1024 * 1024,
  /** YAML tokens of one file (building the document costs time and memory per token) */
  maxTokens: 600_000,
  /** nesting of flow collections ([ and {), and of block indicators on one line (- - - x) */
  maxFlowDepth: 100,
  /** indentation of a line, in columns (block nesting) */
  maxIndent: 1_000,
  /** nesting of the converted value (maps, lists, through aliases) */
  maxDepth: 200,
  /** alias uses (`*name`) in one file */
  maxAliases: 10_000,
  /** values produced while converting one file, aliases expanded */
  maxNodes: 500_000,
} as const;

function tooBig(code: string, message: string, location: SourceLocation, hint: string): SflowError {
  return new SflowError(code, message, { phase: 'load', location, hint });
}

/** Reads at most `maxBytes` (also from a pipe or device); throws a located error beyond. */
export function readBounded(file: string, maxBytes: number = YAML_LIMITS.maxBytes): string {
  const fd = openSync(file, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.alloc(Math.min(1 << 20, maxBytes + 1 - total));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > maxBytes) {
        throw tooBig(
          'config.too_large',
          `configuration file ${file} is larger than ${maxBytes / 1024 / 1024} MiB`,
          { file, line: 1, col: 1 },
          'a recipe is a few KB; keep large data (scripts, tables) in files the tasks read',
        );
      }
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** marker tokens of the YAML lexer that stand for no source text */
const MARKERS = new Set(['\u0002', '\u0018', '\u001f', '\ufeff']);

/**
 * One pass of the YAML lexer over `text`: throws a located error when the document has too many
 * tokens, flow collections nested too deeply, or lines indented too far.
 */
export function precheckYaml(text: string, file: string, at: (offset: number) => SourceLocation): void {
  for (const tok of checkedLexemes(text, file, at)) void tok;
}

/**
 * The YAML lexer's tokens of `text`, each checked as `precheckYaml` does before it is yielded: a
 * parser fed from here lexes once and still stops at the first token past a limit.
 */
export function* checkedLexemes(
  text: string,
  file: string,
  at: (offset: number) => SourceLocation,
): Generator<string, void, undefined> {
  if (text.length > YAML_LIMITS.maxBytes) {
    throw tooBig(
      'config.too_large',
      `configuration file ${file} is larger than ${YAML_LIMITS.maxBytes / 1024 / 1024} MiB`,
      { file, line: 1, col: 1 },
      'a recipe is a few KB; keep large data (scripts, tables) in files the tasks read',
    );
  }
  let tokens = 0;
  let flow = 0;
  let offset = 0;
  let lineStart = true;
  /** block indicators (`- `, `? `) on the current line: each one nests a level deeper */
  let compact = 0;
  for (const tok of new Lexer().lex(text)) {
    if (++tokens > YAML_LIMITS.maxTokens) {
      throw tooBig(
        'config.too_complex',
        `configuration file has more than ${YAML_LIMITS.maxTokens} YAML tokens`,
        at(offset),
        'split the recipe, or generate fewer entries (replicas and sweeps expand one task into many)',
      );
    }
    if (tok === '[' || tok === '{') {
      if (++flow > YAML_LIMITS.maxFlowDepth) {
        throw tooBig(
          'config.yaml_depth',
          `YAML nesting is too deep (more than ${YAML_LIMITS.maxFlowDepth} levels of [ and {)`,
          at(offset),
          'flatten the structure',
        );
      }
    } else if (tok === ']' || tok === '}') flow = Math.max(0, flow - 1);
    else if ((tok === '-' || tok === '?') && ++compact > YAML_LIMITS.maxFlowDepth) {
      throw tooBig(
        'config.yaml_depth',
        `YAML nesting is too deep (more than ${YAML_LIMITS.maxFlowDepth} levels of "- " on one line)`,
        at(offset),
        'flatten the structure',
      );
    } else if (lineStart && tok.length > YAML_LIMITS.maxIndent && /^ +$/.test(tok)) {
      throw tooBig(
        'config.yaml_depth',
        `YAML nesting is too deep (a line indented by more than ${YAML_LIMITS.maxIndent} columns)`,
        at(offset),
        'flatten the structure',
      );
    }
    if (!MARKERS.has(tok)) {
      offset += tok.length;
      lineStart = tok === '\n';
      if (lineStart) compact = 0;
    }
    yield tok;
  }
}

/** Counts what converting one document produces; throws a located error past the limits. */
export class ConversionBudget {
  private aliases = 0;
  private nodes = 0;

  alias(location: () => SourceLocation | undefined): void {
    if (++this.aliases > YAML_LIMITS.maxAliases) {
      throw new SflowError(
        'config.yaml_aliases',
        `more than ${YAML_LIMITS.maxAliases} YAML aliases (*name)`,
        {
          phase: 'load',
          location: location(),
          hint: 'aliases are expanded in full; repeat fewer of them',
        },
      );
    }
  }

  node(location: () => SourceLocation | undefined): void {
    if (++this.nodes > YAML_LIMITS.maxNodes) {
      throw new SflowError(
        'config.yaml_aliases',
        `YAML aliases expand to more than ${YAML_LIMITS.maxNodes} values (an alias of an alias of …)`,
        {
          phase: 'load',
          location: location(),
          hint: 'aliases are expanded in full; nest aliases of aliases less deeply',
        },
      );
    }
  }
}
