/** `sflow visualize`: the task DAG as Mermaid, DOT, SVG or PNG (rendered in-process, no system Graphviz). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadRecipe } from '../config/load.js';
import { buildPlan } from '../plan/build.js';
import { planToDagView } from '../plan/dag-view.js';
import { folderName } from '../plan/folder-name.js';
import { makeRunId } from '../plan/run-id.js';
import { inputFiles, loadOptions, printWarnings } from './common.js';
import { reportError } from './errors.js';

const EXT: Record<string, string> = { mermaid: 'mmd', dot: 'dot', svg: 'svg', png: 'png' };

export async function visualizeCommand(positional: string[], opts: Record<string, unknown>): Promise<number> {
  try {
    const files = inputFiles(positional, opts, 'sflow.yaml');
    const loaded = loadRecipe(loadOptions(files, opts));
    printWarnings(loaded.warnings);
    const workflow = String((loaded.recipe as { workflow: { name: string } }).workflow.name);
    const workspaceDir = (opts.workspaceDir as string | undefined) ?? process.cwd();
    const runId = makeRunId(workflow);
    const plan = buildPlan(loaded, {
      workspaceDir,
      outputDir: opts.outputDir as string | undefined,
      dryRun: true,
      runId,
    });
    const view = planToDagView(plan);
    const variables = opts.showVariables
      ? Object.fromEntries(plan.variables.map((v) => [v.name, v.rendered]))
      : undefined;
    const format = String(opts.format ?? 'svg');
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
    const out =
      typeof opts.output === 'string'
        ? resolve(opts.output)
        : join(plan.paths.outputDir, folderName(runId), `${folderName(workflow)}.${EXT[format]}`);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, data);
    process.stdout.write(`✓ Saved to ${out}\n`);
    return 0;
  } catch (e) {
    return reportError(e);
  }
}
