/** `task.result` (v0.3, config §1.15) and the legacy `task.outputs`. */
import * as z from 'zod';
import {
  atomJsonSchemas,
  bool,
  describe,
  isExpr,
  isPlainObject,
  msg,
  oneOf,
  str,
  strOrInt,
} from './common.js';
import { list, record, strictObject } from './shapes.js';

export const RESULT_TYPES = ['auto', 'string', 'int', 'float', 'bool', 'json'] as const;
export const RESULT_AGGREGATES = ['first', 'last', 'list', 'count', 'min', 'max', 'avg', 'sum'] as const;

const ResultPatternSchema = strictObject('result pattern', {
  name: str({ nonEmpty: true }),
  /** regex (Python syntax in the docs; `(?P<value>…)` is translated by the parser) */
  regex: str({ nonEmpty: true }),
  type: oneOf(RESULT_TYPES).optional(),
  unit: str().nullable().optional(),
  aggregate: oneOf(RESULT_AGGREGATES).optional(),
  required: bool().optional(),
  source: oneOf(['log']).optional(),
  /** capture group name or index */
  group: strOrInt().nullable().optional(),
});

const SourceSchema = oneOf(['log']).optional();

const FileSchema = str({ nonEmpty: true }).superRefine((f, ctx) => {
  if (isExpr(f)) return;
  const problem = /^([/\\]|[A-Za-z]:)/.test(f)
    ? 'must be relative to the task output directory'
    : f.split(/[/\\]/).includes('..')
      ? "must not contain '..'"
      : !f.toLowerCase().endsWith('.json')
        ? "must end in '.json'"
        : undefined;
  if (problem)
    ctx.addIssue({
      code: 'custom',
      continue: false,
      input: f,
      message: msg(
        `result.file ${problem}, got '${f}'`,
        "for a metric named 'file', use the result.patterns form",
      ),
    });
});

const PatternsForm = strictObject('result', {
  patterns: list(ResultPatternSchema, 'patterns', true),
  source: SourceSchema,
  file: z.never({ error: msg('result.patterns and result.file are mutually exclusive') }).optional(),
});

const FileForm = strictObject('result', { file: FileSchema, source: SourceSchema });

const SimpleForm = record(str({ nonEmpty: true }), 'result');

export interface ResultPattern {
  name: string;
  regex: string;
  type: (typeof RESULT_TYPES)[number];
  unit?: string | null;
  aggregate: (typeof RESULT_AGGREGATES)[number];
  required: boolean;
  source?: 'log';
  group?: string | number | null;
}

export interface ResultSpec {
  patterns: ResultPattern[];
  file?: string;
  source?: 'log';
}

type Ctx = { addIssue: (i: z.core.$ZodRawIssue) => void };

function reissue(ctx: Ctx, issues: readonly z.core.$ZodIssue[]) {
  for (const iss of issues) ctx.addIssue(iss as unknown as z.core.$ZodRawIssue);
}

function withDefaults(p: z.output<typeof ResultPatternSchema>): ResultPattern {
  return { ...p, type: p.type ?? 'auto', aggregate: p.aggregate ?? 'last', required: p.required ?? false };
}

function normalise(v: unknown, ctx: Ctx): ResultSpec {
  if (!isPlainObject(v)) {
    ctx.addIssue({
      code: 'custom',
      continue: false,
      input: v,
      message: msg(`expected a mapping for result, got ${describe(v)}`),
    });
    return z.NEVER;
  }
  const keys = Object.keys(v);
  if ('patterns' in v) {
    const r = PatternsForm.safeParse(v, { reportInput: true });
    if (!r.success) {
      reissue(ctx, r.error.issues);
      return z.NEVER;
    }
    const seen = new Set<string>();
    r.data.patterns.forEach((p, i) => {
      if (seen.has(p.name))
        ctx.addIssue({
          code: 'custom',
          continue: false,
          input: p.name,
          path: ['patterns', i, 'name'],
          message: msg(`duplicate result pattern name '${p.name}'`),
        });
      seen.add(p.name);
    });
    return {
      patterns: r.data.patterns.map(withDefaults),
      ...(r.data.source ? { source: r.data.source } : {}),
    };
  }
  if ('file' in v && keys.every((k) => k === 'file' || k === 'source')) {
    const r = FileForm.safeParse(v, { reportInput: true });
    if (!r.success) {
      reissue(ctx, r.error.issues);
      return z.NEVER;
    }
    return { patterns: [], file: r.data.file, ...(r.data.source ? { source: r.data.source } : {}) };
  }
  const { source, ...entries } = v;
  let bad = false;
  if ('file' in entries) {
    bad = true;
    ctx.addIssue({
      code: 'custom',
      continue: false,
      input: v.file,
      path: ['file'],
      message: msg(
        "result.file cannot be mixed with 'name: regex' entries",
        "use either result.file alone, or the result.patterns form for a metric named 'file'",
      ),
    });
  }
  const s = SourceSchema.safeParse(source, { reportInput: true });
  if (!s.success) {
    bad = true;
    reissue(
      ctx,
      s.error.issues.map((i) => ({ ...i, path: ['source', ...i.path] })),
    );
  }
  for (const [name, regex] of Object.entries(entries)) {
    if (typeof regex !== 'string' || regex.trim() === '') {
      bad = true;
      ctx.addIssue({
        code: 'custom',
        continue: false,
        input: regex,
        path: [name],
        message: msg(
          `result entry '${name}' must be a regex string, got ${describe(regex)}`,
          'use result.patterns for type/aggregate/required options',
        ),
      });
    }
  }
  if (bad) return z.NEVER;
  if (Object.keys(entries).length === 0) {
    ctx.addIssue({
      code: 'custom',
      continue: false,
      input: v,
      message: msg("result must contain 'patterns', 'file', or 'name: regex' entries"),
    });
    return z.NEVER;
  }
  const patterns = Object.entries(entries).map(([name, regex]) =>
    withDefaults({ name, regex: regex as string }),
  );
  return { patterns, ...(s.data ? { source: s.data } : {}) };
}

const resultInput = z.unknown();
atomJsonSchemas.set(resultInput, (convert) => ({
  anyOf: [convert(PatternsForm), convert(FileForm), convert(SimpleForm)],
}));

export const ResultSchema = resultInput.transform(normalise) as unknown as z.ZodType<ResultSpec>;

/** Legacy v0.2 `outputs` entries. */
export const OutputSchema = strictObject('outputs entry', {
  /** parse-style template, e.g. `TTFT: {ttft:f} ms` */
  pattern: str({ nonEmpty: true }),
  source: str().optional(),
  metrics: record(
    strictObject('outputs metric', {
      description: str().nullable().optional(),
      type: str().nullable().optional(),
      aggregate: str().nullable().optional(),
    }),
    'metrics',
  )
    .nullable()
    .optional(),
});

export type Output = z.output<typeof OutputSchema>;
