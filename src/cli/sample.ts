/** `sflow sample`: list the shipped samples, or copy one into the current directory (cli.md §9.5). */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { findSample, listSamples, readSampleFile, type Sample } from '../samples/catalog.js';

const TITLES: Record<string, string> = {
  'self_contained/local': 'Local (this machine, no scheduler)',
  'self_contained/slurm': 'Slurm',
  'self_contained/docker': 'Docker (one host or an SSH-reachable pool)',
  'self_contained/kubernetes': 'Kubernetes',
  modular: 'Modular folders (backend + workload + benchmark fragments, copied whole)',
};

export function renderSampleList(samples: Sample[]): string {
  const lines: string[] = [];
  const width = Math.max(...samples.map((s) => s.name.length));
  let category = '';
  for (const s of samples) {
    if (s.category !== category) {
      category = s.category;
      lines.push(`${lines.length ? '\n' : ''}${TITLES[category] ?? category}:`);
    }
    lines.push(`  ${s.name.padEnd(width)}  ${s.description}`);
  }
  lines.push(
    '',
    'Copy one with: sflow sample NAME [-o DIR]   (NAME may be any unambiguous tail, e.g. local/dag)',
  );
  return lines.join('\n') + '\n';
}

interface SampleOptions {
  list?: boolean;
  output?: string;
  force?: boolean;
}

export async function sampleCommand(name: string | undefined, opts: SampleOptions): Promise<number> {
  const samples = listSamples();
  if (samples.length === 0) {
    process.stderr.write('✗ No samples are installed with this sflow (assets/samples is empty)\n');
    return 1;
  }
  if (opts.list || !name) {
    process.stdout.write(renderSampleList(samples));
    return 0;
  }
  const found = findSample(name, samples);
  if (!('sample' in found)) {
    const why = found.candidates.length
      ? `'${name}' matches several samples: ${found.candidates.map((s) => s.name).join(', ')}`
      : `unknown sample '${name}'`;
    process.stderr.write(
      `✗ ${why}\n\n${renderSampleList(found.candidates.length ? found.candidates : samples)}`,
    );
    return 1;
  }
  return copySample(found.sample, opts);
}

/** Where the sample goes: `-o` is a directory, or (for a single recipe) a `.yaml` file path. */
function destination(s: Sample, output: string | undefined): string {
  const base = basename(s.name);
  const dir = resolve(output ?? '.');
  if (s.kind === 'file' && output && /\.ya?ml$/.test(output)) return dir;
  return s.kind === 'file' ? join(dir, `${base}.yaml`) : join(dir, base);
}

function copySample(s: Sample, opts: SampleOptions): number {
  const dest = destination(s, opts.output);
  const shown = relative(process.cwd(), dest) || '.';
  const display = shown.startsWith('..') ? dest : `./${shown}`;
  if (existsSync(dest) && !opts.force) {
    process.stderr.write(`✗ ${display} already exists (use --force to overwrite)\n`);
    return 1;
  }
  if (s.kind === 'file') {
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, readSampleFile(s, s.files[0]));
    process.stdout.write(`✓ Wrote ${display}\n  next: sflow run -f ${display} --dry-run\n`);
    return 0;
  }
  if (existsSync(dest) && !statSync(dest).isDirectory()) {
    process.stderr.write(`✗ ${display} exists and is not a folder\n`);
    return 1;
  }
  for (const rel of s.files) {
    const target = join(dest, ...rel.split('/'));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, readSampleFile(s, rel));
  }
  process.stdout.write(
    `✓ Wrote ${display}/ (${s.files.length} files)\n  next: cd ${display} and read README.md for the sflow run -f … combinations\n`,
  );
  return 0;
}
