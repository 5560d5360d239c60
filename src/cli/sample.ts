/** `sflow sample`: list the shipped samples, or copy one into the current directory (cli.md §9.5). */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import {
  findSample,
  listSamples,
  readSampleFile,
  sampleOfHeadline,
  type Family,
  type Sample,
} from '../samples/catalog.js';

const TITLES: Record<string, string> = {
  'self_contained/local': 'Local (this machine, no scheduler)',
  'self_contained/slurm': 'Slurm',
  'self_contained/docker': 'Docker (one host or an SSH-reachable pool)',
  'self_contained/kubernetes': 'Kubernetes',
  modular: 'Modular folders (backend + workload + benchmark fragments, copied whole)',
};

const FAMILY_TITLES: Record<Family, string> = {
  basics: 'basics',
  storage: 'uploads to storage',
  gpus: 'GPU placement and monitoring',
  serving: 'LLM serving (vLLM, SGLang, TensorRT-LLM, Dynamo)',
};

/** grouped by platform, then by family (the catalogue's order) */
export function renderSampleList(samples: Sample[]): string {
  const lines: string[] = [];
  const width = Math.max(...samples.map((s) => s.name.length));
  let category = '';
  let family = '';
  for (const s of samples) {
    if (s.category !== category) {
      category = s.category;
      family = '';
      lines.push(`${lines.length ? '\n' : ''}${TITLES[category] ?? category}:`);
    }
    if (s.family !== family) {
      family = s.family;
      lines.push(`  ${FAMILY_TITLES[s.family]}:`);
    }
    lines.push(`    ${s.name.padEnd(width)}  ${s.description}`);
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

/**
 * Where the sample goes: `-o` is a directory, or (for a single recipe) a `.yaml` file path.
 * A recipe is `<name>.yaml`; when that file holds another sample of the same name (the first
 * line tells), `<platform>_<name>.yaml` beside it, so same-named samples never overwrite
 * each other. `besides`: the sample found in the way.
 */
function destination(s: Sample, output: string | undefined): { path: string; besides?: Sample } {
  const base = basename(s.name);
  const dir = resolve(output ?? '.');
  if (s.kind === 'file' && output && /\.ya?ml$/.test(output)) return { path: dir };
  if (s.kind === 'folder') return { path: join(dir, base) };
  const plain = join(dir, `${base}.yaml`);
  if (!existsSync(plain) || statSync(plain).isDirectory()) return { path: plain };
  const holder = sampleOfHeadline(readFileSync(plain, 'utf8'));
  if (!holder || holder.name === s.name) return { path: plain };
  return { path: join(dir, `${basename(s.category)}_${base}.yaml`), besides: holder };
}

function copySample(s: Sample, opts: SampleOptions): number {
  const { path: dest, besides } = destination(s, opts.output);
  const shown = relative(process.cwd(), dest) || '.';
  const display = shown.startsWith('..') ? dest : `./${shown}`;
  if (existsSync(dest) && !opts.force) {
    process.stderr.write(`✗ ${display} already exists (use --force to overwrite)\n`);
    return 1;
  }
  if (s.kind === 'file') {
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, readSampleFile(s, s.files[0]));
    const why = besides ? ` (${basename(s.name)}.yaml there is ${besides.name})` : '';
    process.stdout.write(`✓ Wrote ${display}${why}\n  next: sflow run -f ${display} --dry-run\n`);
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
