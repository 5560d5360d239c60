/**
 * Checks of `sflow run` that need the plan and the command line together, before anything is
 * allocated: SFLOW_TASK_OUTPUT, `--tui` in the single executable, and the features this
 * version plans but does not run yet (src/plan/not-yet.ts). A real run refuses those (exit 1,
 * located); `--dry-run` prints the plan and lists them as warnings.
 */
import type { LoadedRecipe } from '../config/load.js';
import { SflowError } from '../util/sflow-error.js';
import { describeFinding, findNotYet } from '../plan/not-yet.js';
import type { Plan } from '../plan/types.js';
import { inSingleExecutable } from '../util/sea.js';
import { cliOptionBag } from '../util/cli-options.js';

export const TASK_OUTPUT_VALUES = ['auto', 'always', 'never', '1', '0'];

function usage(code: string, message: string, hint: string): SflowError {
  return new SflowError(code, message, { phase: 'usage', hint, exitCode: 2 });
}

function checkTaskOutputSetting(env: NodeJS.ProcessEnv): string | undefined {
  const v = env.SFLOW_TASK_OUTPUT;
  if (v === undefined || TASK_OUTPUT_VALUES.includes(v.toLowerCase())) return undefined;
  return `SFLOW_TASK_OUTPUT='${v}' is not one of ${TASK_OUTPUT_VALUES.join(', ')}`;
}

/**
 * Dry-run: the warnings to list with the plan. Real run: throws for every refused feature (all
 * of them in one error) and returns the warnings to print.
 */
export function runPreflight(
  plan: Plan,
  loaded: LoadedRecipe,
  opts: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const warnings: string[] = [];
  const output = checkTaskOutputSetting(env);
  if (output) {
    if (!plan.dryRun)
      throw usage('cli.task_output_value', output, 'unset it, or set always (echo task output) or never');
    warnings.push(`${output}: a real run refuses it`);
  }
  // refused before the run folder exists (the executable's bundle has no live view to load)
  if (!plan.dryRun && opts.tui && process.stdout.isTTY && inSingleExecutable())
    throw new SflowError('exe.no_tui', 'the full-screen live view (--tui) is not in the single executable', {
      phase: 'limitation',
      hint: 'run without --tui (the console view), or use sflow installed with npm',
    });
  const findings = findNotYet({ plan, loaded, options: cliOptionBag(opts) });
  const refused = findings.filter((f) => f.row.action === 'refuse');
  for (const f of findings) {
    if (f.row.action === 'warn') warnings.push(describeFinding(f));
    else if (plan.dryRun) warnings.push(`${describeFinding(f)} — a real run refuses this`);
  }
  if (plan.dryRun || refused.length === 0) return warnings;
  const hint =
    'remove it (or run the plan with --dry-run to see what it would do); every refusal is listed before anything starts';
  if (refused.length === 1) {
    throw new SflowError('run.not_yet', refused[0].message, {
      phase: 'limitation',
      location: refused[0].location,
      hint,
    });
  }
  throw new SflowError(
    'run.not_yet',
    `this recipe uses ${refused.length} things this version plans but does not run yet; nothing was started:`,
    {
      phase: 'limitation',
      location: refused[0].location,
      details: refused.map((f) => ({ message: f.message, location: f.location })),
      hint,
    },
  );
}
