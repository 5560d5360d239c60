/**
 * `sflow visualize`: the task DAG as Mermaid, DOT, SVG or PNG (rendered in-process, no system
 * Graphviz). Mermaid goes to stdout unless -o names a file; `-o -` means stdout for every format
 * (PNG's bytes too, but never onto a terminal); the others default to ./<workflow>.<ext>.
 */
import { extname, join } from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { loadRecipe } from '../config/load.js';
import { buildPlan } from '../plan/build.js';
import { backendCatalog } from '../backends/registry.js';
import { planToDagView } from '../plan/dag-view.js';
import { folderName } from '../plan/folder-name.js';
import { makeRunId } from '../plan/run-id.js';
import { inputFiles, loadOptions, printWarnings } from './common.js';
import { reportError } from './errors.js';
import { writeOutput } from '../outputs/write-output.js';

const EXT: Record<string, string> = { mermaid: 'mmd', dot: 'dot', svg: 'svg', png: 'png' };
const BY_EXT: Record<string, string> = {
  '.mmd': 'mermaid',
  '.mermaid': 'mermaid',
  '.dot': 'dot',
  '.gv': 'dot',
  '.svg': 'svg',
  '.png': 'png',
};

/** `--format`, else what `-o`'s extension names, else svg; a contradiction is a usage error. */
export function visualizeFormat(format: string | undefined, output: string | undefined): string {
  const ext = output ? extname(output).toLowerCase() : '';
  const implied = ext ? BY_EXT[ext] : undefined;
  const usage = (message: string, hint: string) =>
    new SflowError('cli.visualize_format', message, { phase: 'usage', hint });
  if (format) {
    if (implied && implied !== format)
      throw usage(
        `--format ${format} does not match the output file ${output} (${ext} is ${implied})`,
        `drop --format, or name the file *.${EXT[format]}`,
      );
    return format;
  }
  if (implied) return implied;
  if (ext)
    throw usage(
      `cannot tell the format of ${output} from its extension ${ext}`,
      'give --format (mermaid, dot, svg or png) or use a .mmd, .dot, .svg or .png file name',
    );
  return 'svg';
}

export async function visualizeCommand(positional: string[], opts: Record<string, unknown>): Promise<number> {
  try {
    const files = inputFiles(positional, opts, 'sflow.yaml');
    const loaded = loadRecipe(loadOptions(files, opts));
    printWarnings(loaded.warnings);
    const workflow = String((loaded.recipe as { workflow: { name: string } }).workflow.name);
    const workspaceDir = (opts.workspaceDir as string | undefined) ?? process.cwd();
    const runId = makeRunId(workflow);
    const plan = buildPlan(loaded, {
      catalog: backendCatalog,
      workspaceDir,
      outputDir: opts.outputDir as string | undefined,
      dryRun: true,
      runId,
    });
    const view = planToDagView(plan);
    const variables = opts.showVariables
      ? Object.fromEntries(plan.variables.map((v) => [v.name, v.rendered]))
      : undefined;
    const format = visualizeFormat(opts.format as string | undefined, opts.output as string | undefined);
    const viz = await import('../visualize/index.js');
    let data: string | Buffer;
    if (format === 'mermaid') data = viz.toMermaid(view, { variables });
    else {
      // wide replica groups are drawn as one node in images (Graphviz layout time grows steeply with width)
      const dot = viz.toDot(view, { variables, ...(format === 'dot' ? {} : { collapseGroupsOver: 50 }) });
      if (format === 'dot') data = dot;
      else {
        const svg = await viz.renderSvg(dot);
        data = format === 'svg' ? svg : await viz.renderPng(svg);
      }
    }
    // `-o -`, and Mermaid without -o (text to paste into a page): stdout
    const output = opts.output as string | undefined;
    if (output === '-' || (output === undefined && format === 'mermaid')) {
      if (format === 'png' && process.stdout.isTTY)
        throw new SflowError('cli.visualize_binary_tty', 'PNG is binary: not written to a terminal', {
          phase: 'usage',
          hint: 'redirect it (sflow visualize --format png -o - > dag.png) or give -o dag.png',
        });
      process.stdout.write(data);
      return 0;
    }
    // no run folder for a drawing: without -o it goes next to the recipe's workspace
    const out = writeOutput(
      output ?? join(plan.paths.workspaceDir, `${folderName(workflow)}.${EXT[format]}`),
      data,
    );
    process.stdout.write(`✓ Saved to ${out}\n`);
    return 0;
  } catch (e) {
    return reportError(e);
  }
}
