/**
 * Names that become file and folder names must fit the file system's limits; checked at plan
 * time (so `--dry-run` reports them, before anything is created) instead of failing the run
 * with ENAMETOOLONG. Limits: one path component ≤ 255 bytes (NAME_MAX on Linux and macOS file
 * systems), a whole path ≤ 4095 bytes (PATH_MAX − 1). The names are checked as written; the
 * folders are made from them by folder-name.ts (which shortens long names with a hash suffix),
 * and the path check measures those real folders.
 */
import { basename } from 'node:path';
import { planError } from '../config/resolve.js';
import { folderName } from './folder-name.js';

export const NAME_MAX_BYTES = 255;
export const PATH_MAX_BYTES = 4095;
/** `-YYYYMMDD-HHMMSS-xxxxxx` after the workflow name in a run id */
const RUN_ID_SUFFIX_BYTES = 23;

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

interface NamedTask {
  name: string;
  base: string;
  outputDir: string;
  logPath: string;
}

/** Throws a located plan error for the first name or path that would exceed a limit. */
export function checkNameLimits(
  workflow: string,
  tasks: NamedTask[],
  doc: unknown,
  declared: { name: string }[],
  outputDir: string,
): void {
  const jobPrefix = bytes(process.env.SLURM_JOB_ID ?? process.env.SLURM_JOBID ?? '');
  const runIdBytes = bytes(workflow) + RUN_ID_SUFFIX_BYTES + (jobPrefix ? jobPrefix + 1 : 0);
  if (runIdBytes > NAME_MAX_BYTES) {
    throw planError(
      { doc, path: ['workflow', 'name'] },
      'plan.name_too_long',
      `workflow name is ${bytes(workflow)} bytes long: the run folder '<name>-<date>-<time>-<id>' would be ${runIdBytes} bytes, over the file system's limit of ${NAME_MAX_BYTES} bytes for one folder name (NAME_MAX)`,
      `use a workflow name of at most ${NAME_MAX_BYTES - RUN_ID_SUFFIX_BYTES - (jobPrefix ? jobPrefix + 1 : 0)} bytes`,
    );
  }
  // the run folder is the run id, whose workflow part folder-name.ts keeps within 80 bytes
  const runFolderBytes =
    bytes(folderName(workflow, 80)) + RUN_ID_SUFFIX_BYTES + (jobPrefix ? Math.min(jobPrefix, 16) + 1 : 0);
  const fixedBytes = bytes(outputDir) + 1 + runFolderBytes + 2;
  for (const t of tasks) {
    // located only when one fails (a plan may hold 10,000 replicas)
    const where = () => ({
      doc,
      path: [
        'workflow',
        'tasks',
        Math.max(
          0,
          declared.findIndex((d) => d.name === t.base),
        ),
        'name',
      ],
    });
    const fileBytes = bytes(t.name) + bytes('.log');
    if (fileBytes > NAME_MAX_BYTES) {
      throw planError(
        where(),
        'plan.name_too_long',
        `task name '${short(t.name)}'${t.name !== t.base ? ` (replica of '${short(t.base)}')` : ''} is ${bytes(t.name)} bytes long: its log file '<name>.log' would be ${fileBytes} bytes, over the file system's limit of ${NAME_MAX_BYTES} bytes for one file name (NAME_MAX)`,
        `task names (with their replica suffix) may be at most ${NAME_MAX_BYTES - bytes('.log')} bytes`,
      );
    }
    const total = fixedBytes + bytes(lastPart(t.outputDir)) + bytes(lastPart(t.logPath));
    if (total > PATH_MAX_BYTES) {
      throw planError(
        where(),
        'plan.path_too_long',
        `the log path of task '${short(t.name)}' would be ${total} bytes long, over the file system's limit of ${PATH_MAX_BYTES} bytes for a path (PATH_MAX)`,
        'use a shorter task name or a shorter --output-dir',
      );
    }
  }
}

/** basename(p), without its allocations for the common path that does not end in a separator */
function lastPart(p: string): string {
  return p.endsWith('/') ? basename(p) : p.slice(p.lastIndexOf('/') + 1);
}

function short(name: string): string {
  return name.length > 60 ? `${name.slice(0, 40)}…${name.slice(-10)}` : name;
}
