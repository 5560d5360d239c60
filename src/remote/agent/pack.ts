/**
 * `sflow remote-agent pack SESSION --mode logs|all`: the session's output as a tar stream on
 * stdout, paths relative to output/ (so they land next to receipt.json locally). `logs` (spec
 * cli.md §9.8): controller.log and, in each run folder, sflow_summary.log, sflow.log, every task's
 * log, *_cmds.log, command_trace.jsonl, loop_stalls.txt, sflow_monitor.log and sflow_monitor/,
 * result.json / results.json, plus events.jsonl and report.html; `all`: everything under output/.
 */
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { sessionPaths } from '../session-layout.js';
import { writeTar, type TarEntry } from '../tar-write.js';

const RUN_FILES = new Set([
  'sflow_summary.log',
  'sflow.log',
  'command_trace.jsonl',
  'loop_stalls.txt',
  'sflow_monitor.log',
  'result.json',
  'results.json',
  'events.jsonl',
  'report.html',
]);

function allFiles(dir: string, out: string[] = []): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) allFiles(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** Does this path (relative to output/, `/`-separated) belong to the `logs` set? */
export function isLogFile(rel: string): boolean {
  const parts = rel.split('/');
  if (parts.length === 1) return parts[0] === 'controller.log';
  const [, ...inRun] = parts; // parts[0] is the run folder
  const name = inRun[inRun.length - 1];
  if (inRun.length === 1) return RUN_FILES.has(name) || name.endsWith('_cmds.log');
  if (inRun[0] === 'sflow_monitor') return true;
  // <task>/<task>.log (and replicas' logs inside their task folder)
  return name.endsWith('.log') || name === 'result.json' || name === 'results.json';
}

export function packEntries(session: string, mode: 'logs' | 'all'): TarEntry[] {
  const out = sessionPaths(session).output;
  return allFiles(out)
    .map((file) => ({ file, name: relative(out, file).split(sep).join('/') }))
    .filter((e) => mode === 'all' || isLogFile(e.name))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

export async function agentPack(session: string, mode: 'logs' | 'all'): Promise<number> {
  await writeTar(process.stdout, packEntries(session, mode));
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  return 0;
}
