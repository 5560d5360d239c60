/** Shared CLI plumbing: input files, load options, warnings. */
import { existsSync, statSync } from 'node:fs';
import { SflowError } from '../util/sflow-error.js';
import type { LoadOptions, LoadWarning } from '../config/load.js';
import { formatLocation } from '../util/sflow-error.js';

export function inputFiles(
  positional: string[],
  opts: Record<string, unknown>,
  defaultFile?: string,
): string[] {
  const files = [...positional, ...((opts.file as string[] | undefined) ?? [])];
  if (files.length === 0 && defaultFile) files.push(defaultFile);
  for (const f of files) {
    const problem = !existsSync(f)
      ? ['cli.file_missing', `file not found: ${f}`]
      : statSync(f).isDirectory()
        ? ['cli.file_is_directory', `${f} is a directory, not a recipe file`]
        : undefined;
    if (problem) {
      throw new SflowError(problem[0], problem[1], {
        phase: 'usage',
        hint: 'check the path given with -f/--file',
        exitCode: 2,
      });
    }
  }
  return files;
}

export function loadOptions(files: string[], opts: Record<string, unknown>): LoadOptions {
  return {
    files,
    set: (opts.set as string[] | undefined) ?? [],
    artifacts: (opts.artifact as string[] | undefined) ?? [],
    missable: (opts.missableTasks as string[] | undefined) ?? [],
  };
}

export function printWarnings(
  warnings: LoadWarning[],
  write: (s: string) => void = (s) => process.stderr.write(s),
): void {
  for (const w of warnings) {
    const at = formatLocation(w.location);
    write(`⚠ ${at ? at + ': ' : ''}${w.message}\n`);
  }
}
