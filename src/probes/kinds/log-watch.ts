/**
 * `log_watch`: met when the watched log (its own task's, or the `logger` task's) holds
 * `match_count` matches of the pattern (a literal, or a regex after `re:`/`regex:`). The check,
 * with the regex mechanics, is ../log-watch.ts.
 */
import { defineProbeKind } from '../kind.js';
import { logWatchCheck } from '../log-watch.js';
import { compilePattern, PatternError } from '../pattern.js';

interface LogWatchDraft {
  /** literal, or `re:`/`regex:` prefixed regex */
  pattern: string;
  matchCount: number;
  /** base name of the watched task (`logger`) */
  logger?: string;
}

export const logWatchProbe = defineProbeKind({
  name: 'log_watch',
  schema: (k) =>
    k
      .strictObject('log_watch probe', {
        /** literal substring unless prefixed with `re:` / `regex:` */
        regex_pattern: k.str({ nonEmpty: true }).optional(),
        /** alias of regex_pattern; moved there on output */
        match_pattern: k.str({ nonEmpty: true }).optional(),
        /** base name of the task whose log is watched (default: own task) */
        logger: k.str().optional(),
        match_count: k.intOrExpr({ min: 1 }).optional(),
      })
      .superRefine((l, ctx) => {
        const { regex_pattern: r, match_pattern: m } = l;
        if (r !== undefined && m !== undefined && r !== m)
          k.fail(
            ctx,
            ['match_pattern'],
            "Only one of 'regex_pattern' or 'match_pattern' may be set, not both",
          );
        else if (r === undefined && m === undefined)
          k.fail(ctx, [], "Either 'regex_pattern' or 'match_pattern' must be set");
      })
      .transform(({ match_pattern, regex_pattern, ...rest }) => ({
        regex_pattern: regex_pattern ?? match_pattern ?? '',
        ...rest,
      })),
  plan: (body, k): LogWatchDraft => {
    const pattern = body.regex_pattern;
    try {
      compilePattern(pattern);
    } catch (e) {
      if (!(e instanceof PatternError)) throw e;
      k.fail('regex_pattern', 'plan.probe_pattern', e.message, e.hint);
    }
    const matchCount =
      body.match_count === undefined || body.match_count === null
        ? 1
        : Number(k.value(body.match_count, 'match_count'));
    if (!Number.isInteger(matchCount) || matchCount < 1)
      k.fail(
        'match_count',
        'plan.probe_range',
        `log_watch.match_count of task '${k.task}' must be an integer > 0`,
      );
    return { pattern, matchCount, ...(body.logger ? { logger: body.logger } : {}) };
  },
  place: (d, f) => ({
    pattern: d.pattern,
    matchCount: d.matchCount,
    logTask: d.logger ? f.instanceOf(d.logger) : f.ownName,
  }),
  describe: (p, self) =>
    `log_watch ${JSON.stringify(p.pattern)}${p.logTask && p.logTask !== self ? ` in ${p.logTask}` : ''}${
      p.matchCount > 1 ? ` x${p.matchCount}` : ''
    }`,
  dryRun: (p, timing) =>
    `log_watch ${JSON.stringify(p.pattern)} in ${p.logTask}.log, match_count=${p.matchCount} (${timing})`,
  check: (p, ctx) =>
    logWatchCheck({ path: ctx.logPath, pattern: p.pattern, matchCount: p.matchCount, logTask: p.logTask }),
});
