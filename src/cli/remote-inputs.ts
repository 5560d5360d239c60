/**
 * The local half of `--ssh` before anything is sent: load, validate and plan the recipe exactly as
 * a local run would (every configuration and plan error fires here), compose it into one file, and
 * list the local inputs to upload: `file://` / `fs://` artifacts with a relative path (inside the
 * workspace). Absolute artifact paths keep their remote meaning and are not uploaded; a relative
 * one that leaves the workspace is refused; files named only inside shell commands are not found.
 * Uploaded folders skip .git, .venv, .sflow, sflow_output and __pycache__.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { relativeInside } from '../util/path-inside.js';
import { backendCatalog } from '../backends/registry.js';
import { SflowError } from '../util/sflow-error.js';
import { redactSecretVariables } from '../config/secret-variables.js';
import { runLoadOptions } from './secrets.js';
import { loadRecipe } from '../config/load.js';
import { applyMonitorFlags } from '../config/monitor-flags.js';
import { uriPathText } from '../plan/artifacts.js';
import { buildPlan } from '../plan/build.js';
import { makeRunId } from '../plan/run-id.js';
import { composeText } from './compose.js';
import { inputFiles, loadOptions, printWarnings } from './common.js';
import type { TarEntry } from '../remote/tar-write.js';

const SKIP_DIRS = new Set(['.git', '.venv', '.sflow', 'sflow_output', '__pycache__']);

export interface StagedInputs {
  /** the composed recipe: secret values included, so it is uploaded from memory, never written here */
  recipeText: string;
  /** the same with secret variables' values replaced by a placeholder: the copy kept locally */
  localCopyText: string;
  /** files to upload, named relative to the remote inputs/ folder */
  files: TarEntry[];
  workflow: string;
}

function addTree(path: string, name: string, out: TarEntry[]): void {
  const st = statSync(path);
  if (st.isFile()) {
    out.push({ file: path, name });
    return;
  }
  if (!st.isDirectory()) return;
  for (const e of readdirSync(path)) {
    if (SKIP_DIRS.has(e)) continue;
    addTree(join(path, e), `${name}/${e}`, out);
  }
}

export function stageInputs(
  command: 'run' | 'compose',
  positional: string[],
  opts: Record<string, unknown>,
  /** the caller has already printed the recipe's warnings (batch --ssh: from its own validation) */
  o: { quiet?: boolean } = {},
): StagedInputs {
  const files = inputFiles(positional, opts, command === 'run' ? 'sflow.yaml' : undefined);
  if (files.length === 0)
    throw new SflowError('cli.no_input', 'no input files provided', {
      phase: 'usage',
      hint: 'pass a recipe with -f FILE',
    });
  // a run's recipe goes up with its secret values (from memory, 0600); composing takes none
  const loaded = loadRecipe(command === 'run' ? runLoadOptions(files, opts) : loadOptions(files, opts));
  if (!o.quiet) printWarnings(loaded.warnings);
  const recipeText = composeText(loaded.doc);
  const localCopyText = composeText(redactSecretVariables(loaded.doc));
  const workflow = String((loaded.recipe as { workflow: { name: string } }).workflow.name);
  const uploads: TarEntry[] = [];
  if (command === 'run') {
    applyMonitorFlags(loaded.recipe, {
      workflow: Boolean(opts.enableWorkflowMonitor),
      tasks: (opts.enableTaskMonitor as string[] | undefined) ?? [],
    });
    const workspaceDir = resolve((opts.workspaceDir as string | undefined) ?? process.cwd());
    // the plan a local dry-run would make: every plan error before anything is sent
    const plan = buildPlan(loaded, {
      dryRun: true,
      runId: makeRunId(workflow),
      workspaceDir,
      catalog: backendCatalog,
    });
    for (const a of plan.artifacts) {
      if ((a.scheme !== 'fs' && a.scheme !== 'file') || a.content !== undefined) continue;
      if (isAbsolute(uriPathText(a.uri))) continue; // keeps its remote meaning
      const rel = relativeInside(workspaceDir, a.path);
      if (!rel)
        throw new SflowError(
          'remote.artifact_escape',
          `Artifact '${a.name}' (${a.uri}) is outside the workspace ${workspaceDir}: it cannot be uploaded for --ssh`,
          {
            phase: 'preflight',
            hint: 'move it inside the workspace (--workspace-dir), or give an absolute path that exists on the remote host',
          },
        );
      if (!existsSync(a.path)) {
        if (a.scheme === 'fs' && !opts.skipArtifactCheck)
          throw new SflowError(
            'preflight.artifacts',
            `Artifact '${a.name}' (fs://) path does not exist: ${a.path}`,
            {
              phase: 'preflight',
              hint: 'create it, point the artifact elsewhere with -a NAME=fs:///path, or pass --skip-artifact-check',
            },
          );
        continue;
      }
      addTree(a.path, `workspace/${rel.split(sep).join('/')}`, uploads);
    }
  }
  return { recipeText, localCopyText, files: uploads, workflow };
}
