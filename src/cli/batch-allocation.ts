/**
 * Where each allocation setting of an `sflow batch` job comes from (partition, account, time,
 * job name and the extra `#SBATCH` lines; the node count is the job's own, batch-job.ts): a flag
 * wins; else the recipe's Slurm backend (the value after expressions and `--set`, located in the
 * recipe); else, for partition and account only, what Slurm says (`sinfo` / `sacctmgr`, asked at
 * most once per command). Every value keeps its source, and the script says where each came from.
 */
import { SflowError } from '../util/sflow-error.js';

export interface Sourced {
  value: string;
  /** where the value came from, for people: `-p`, `the recipe: backend 'gpu' partition (wf.yaml:9:16)`, `sinfo` */
  from: string;
}

export interface JobAllocation {
  partition: Sourced;
  account: Sourced;
  time?: Sourced;
  jobName: Sourced;
  /** one `#SBATCH` line each: the recipe backend's `extra_args`, then `-e` */
  extra: Sourced[];
}

/** the recipe's Slurm backend as a batch job reads it */
export interface RecipeBackend {
  name: string;
  config: Record<string, unknown>;
  /** `file:line:col` of one of its fields, when known */
  at(field: string, index?: number): string | undefined;
}

export interface AllocationFlags {
  partition?: string;
  account?: string;
  time?: string;
  jobName?: string;
  extra: string[];
}

/** how partition and account are detected when neither a flag nor the recipe gives them */
export interface AllocationDetect {
  partition(): Promise<string | undefined>;
  account(): Promise<string | undefined>;
  /** the source text of a detected value, e.g. `sinfo` or `sinfo on login1` */
  source(field: 'partition' | 'account'): string;
}

const text = (v: unknown): string | undefined =>
  v === undefined || v === null || String(v) === '' ? undefined : String(v);

const FLAG: Record<'partition' | 'account' | 'time' | 'jobName', string> = {
  partition: '-p/--partition',
  account: '-A/--account',
  time: '--time',
  jobName: '-J/--job-name',
};

/** `["--gres", "gpu:8", "--exclusive"]` → `["--gres gpu:8", "--exclusive"]`: a value stays on its option's line */
export function sbatchLines(args: string[]): Array<{ line: string; first: number }> {
  const out: Array<{ line: string; first: number }> = [];
  args.forEach((a, i) => {
    const prev = out[out.length - 1];
    if (prev && !a.startsWith('-') && prev.line.startsWith('-') && !prev.line.includes('='))
      prev.line += ` ${a}`;
    else out.push({ line: a, first: i });
  });
  return out;
}

/** a value becomes part of one `#SBATCH` line: a line break would start a command of its own */
function oneLine(v: Sourced): void {
  if (!/[\r\n]/.test(v.value)) return;
  throw new SflowError('batch.multiline_value', `${v.from}: ${JSON.stringify(v.value)} spans lines`, {
    phase: v.from.startsWith('the recipe') ? 'load' : 'usage',
    hint: 'each setting is one #SBATCH line: remove the line break',
  });
}

export class AllocationResolver {
  private readonly detected = new Map<'partition' | 'account', Promise<string | undefined>>();

  constructor(
    private readonly flags: AllocationFlags,
    private readonly detect: AllocationDetect,
    private readonly warn: (message: string) => void,
  ) {}

  private fromRecipe(b: RecipeBackend | undefined, field: string, key: string): Sourced | undefined {
    const v = b ? text(b.config[key]) : undefined;
    if (v === undefined || !b) return undefined;
    const at = b.at(key);
    return { value: v, from: `the recipe: backend '${b.name}' ${key}${at ? ` (${at})` : ''}` };
  }

  private async detectOnce(field: 'partition' | 'account', b: RecipeBackend | undefined): Promise<Sourced> {
    let p = this.detected.get(field);
    const first = !p;
    if (!p) this.detected.set(field, (p = this.detect[field]()));
    const v = await p;
    const flag = FLAG[field];
    if (!v)
      throw new SflowError(
        `batch.no_${field}`,
        `no ${field} for the job: no ${flag} given, ${b ? `the recipe's slurm backend '${b.name}' gives none` : 'the recipe has no slurm backend'}, and ${this.detect.source(field)} found none`,
        {
          phase: 'usage',
          hint: `pass ${flag}, or set ${field}: in the recipe's slurm backend`,
        },
      );
    if (first)
      this.warn(
        `using ${field} '${v}' (auto-detected by ${this.detect.source(field)}; pass ${flag} or set ${field}: in the recipe's slurm backend to choose)`,
      );
    return { value: v, from: this.detect.source(field) };
  }

  private flag(field: keyof typeof FLAG): Sourced | undefined {
    const v = text(this.flags[field]);
    return v === undefined ? undefined : { value: v, from: FLAG[field] };
  }

  /** The job's settings; `jobName` given by a bulk mode (its row or file name) counts as a flag. */
  async forJob(b: RecipeBackend | undefined, jobName?: string): Promise<JobAllocation> {
    const partition =
      this.flag('partition') ??
      this.fromRecipe(b, 'partition', 'partition') ??
      (await this.detectOnce('partition', b));
    const account =
      this.flag('account') ??
      this.fromRecipe(b, 'account', 'account') ??
      (await this.detectOnce('account', b));
    const time = this.flag('time') ?? this.fromRecipe(b, 'time', 'time');
    const name = (jobName !== undefined ? { value: jobName, from: 'its bulk row or file' } : undefined) ??
      this.flag('jobName') ??
      this.fromRecipe(b, 'jobName', 'job_name') ?? { value: 'sflow', from: 'the default' };
    const recipeExtra = Array.isArray(b?.config.extra_args) ? b.config.extra_args.map(String) : [];
    const extra: Sourced[] = sbatchLines(recipeExtra).map(({ line, first }) => {
      const at = b?.at('extra_args', first);
      return { value: line, from: `the recipe: backend '${b!.name}' extra_args${at ? ` (${at})` : ''}` };
    });
    for (const e of this.flags.extra) extra.push({ value: e, from: '-e/--sbatch-extra-args' });
    for (const v of [partition, account, time, name, ...extra]) if (v) oneLine(v);
    return { partition, account, ...(time ? { time } : {}), jobName: name, extra };
  }
}
