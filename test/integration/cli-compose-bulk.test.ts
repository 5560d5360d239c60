/**
 * `sflow compose --bulk-input` (cli.md §9.3, config.md §4.9) over the shipped modular serving sample:
 * one composed recipe per CSV row, row selection, CSV-vs-CLI precedence, --validate, bad input.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { hasStackTrace, REPO, sflow } from '../helpers/cli.js';
import { rowNames, selectRows, type BulkRow } from '../../src/config/bulk-csv.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** a private copy of the modular sample plus a CSV next to it */
function fixture(csv: string): string {
  const d = mkdtempSync(join(tmpdir(), 'sflow-bulk-'));
  dirs.push(d);
  cpSync(join(REPO, 'assets', 'samples', 'modular', 'backend_agnostic'), d, { recursive: true });
  writeFileSync(join(d, 'rows.csv'), csv);
  return d;
}

const BASE = ['workloads/dynamo_common.yaml', 'workloads/dynamo_vllm_disagg.yaml', 'benchmark.yaml'];
const CSV = [
  'sflow_config_file,job_name,SERVED_MODEL_NAME,SERVER_GPUS',
  'backends/slurm.yaml,,Qwen/Qwen3-8B,4',
  'backends/docker.yaml,,,',
  'backends/k8s.yaml,k8s-small,,1',
].join('\n');

function composed(dir: string): Record<string, any> {
  const root = join(dir, 'out');
  const [run] = readdirSync(root);
  expect(run).toMatch(/^compose_\d{8}-\d{6}$/);
  return Object.fromEntries(
    readdirSync(join(root, run)).map((f) => [f, parse(readFileSync(join(root, run, f), 'utf8'))]),
  );
}

const variable = (doc: any, name: string) => doc.variables.find((v: any) => v.name === name)?.value;

describe('compose --bulk-input', () => {
  it('writes one recipe per row, named from the row, with the CSV cells applied', () => {
    const dir = fixture(CSV);
    const r = sflow(['compose', ...BASE, '--bulk-input', 'rows.csv', '-o', 'out'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Composed 3 of 3 row\(s\) -> .*compose_/);
    const docs = composed(dir);
    expect(Object.keys(docs).sort()).toEqual([
      'docker_002.yaml',
      'k8s-small_003.yaml',
      'slurm_Qwen_Qwen3-8B_4_001.yaml',
    ]);
    const slurm = docs['slurm_Qwen_Qwen3-8B_4_001.yaml'];
    expect(slurm.backends[0].type).toBe('slurm');
    expect(variable(slurm, 'SERVED_MODEL_NAME')).toBe('Qwen/Qwen3-8B');
    expect(variable(slurm, 'SERVER_GPUS')).toBe(4);
    expect(variable(docs['docker_002.yaml'], 'SERVED_MODEL_NAME')).toBe('Qwen3-0.6B');
    expect(docs['k8s-small_003.yaml'].workflow.tasks.map((t: any) => t.name)).toContain('decode_server');
  });

  it('--row picks rows (1-based, slices with an exclusive end); the CSV beats --set, with a warning', () => {
    const dir = fixture(CSV);
    const r = sflow(
      [
        'compose',
        ...BASE,
        '-b',
        'rows.csv',
        '--row',
        '2:4',
        '-s',
        'SERVER_GPUS=2',
        '-s',
        'SERVED_MODEL_NAME=x',
        '-o',
        'out',
      ],
      { cwd: dir },
    );
    expect(r.code, r.stderr).toBe(0);
    const docs = composed(dir);
    expect(Object.keys(docs).sort()).toEqual(['docker_002.yaml', 'k8s-small_003.yaml']);
    expect(variable(docs['docker_002.yaml'], 'SERVER_GPUS')).toBe(2);
    expect(variable(docs['k8s-small_003.yaml'], 'SERVER_GPUS')).toBe(1);
    expect(r.stderr).toContain('row 3: the CSV value of SERVER_GPUS overrides --set SERVER_GPUS=2');
  });

  it('--validate dry-runs each row quietly: a row that cannot be planned is a warning, its file is still written', () => {
    const dir = fixture(CSV.replace('backends/docker.yaml,,,', 'backends/docker.yaml,,,9'));
    const r = sflow(['compose', ...BASE, '-b', 'rows.csv', '--validate', '-o', 'out'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/⚠ row 2 \(.*\) does not dry-run: .*(prefill|decode)_server/);
    expect(r.stderr).not.toMatch(/row 1 .*does not dry-run/);
    expect(Object.keys(composed(dir))).toHaveLength(3);
  });

  it('bad input: unknown column, blank config cell (the CSV: exit 1); --row without --bulk-input, a bad selector (usage: 2)', () => {
    const unknown = fixture('sflow_config_file,NOT_A_VAR\nbackends/local.yaml,1\n');
    const u = sflow(['compose', ...BASE, '-b', 'rows.csv'], { cwd: unknown });
    expect(u.code).toBe(1);
    expect(u.stderr).toMatch(
      /^✗ Configuration error: .*rows\.csv:1:1: column\(s\) 'NOT_A_VAR' name no variable or artifact/,
    );
    const blank = fixture('sflow_config_file,SERVED_MODEL_NAME\nbackends/local.yaml,a\n ,b\n');
    const b = sflow(['compose', ...BASE, '-b', 'rows.csv'], { cwd: blank });
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(/^✗ Configuration error: rows\.csv:3:1: row 2 has an empty 'sflow_config_file'/);
    const nob = sflow(['compose', 'backends/local.yaml', '--row', '1'], { cwd: blank });
    expect(nob.code).toBe(2);
    expect(nob.stderr).toContain(
      '✗ Usage error: --row selects rows of --bulk-input; there is no --bulk-input',
    );
    const sel = sflow(['compose', ...BASE, '-b', 'rows.csv', '--row', '7'], { cwd: fixture(CSV) });
    expect(sel.code).toBe(2);
    expect(sel.stderr).toContain("✗ Usage error: --row '7': row 7 does not exist");
    for (const x of [u, b, nob, sel]) expect(hasStackTrace(x.stderr)).toBe(false);
  });
});

describe('row selection and names', () => {
  it('selectors: N, lists, brackets, slices with steps, unioned', () => {
    expect(selectRows(['3'], 5)).toEqual([3]);
    expect(selectRows(['[1,4]', '2'], 5)).toEqual([1, 2, 4]);
    expect(selectRows(['2:4'], 5)).toEqual([2, 3]);
    expect(selectRows([':3', '4:'], 5)).toEqual([1, 2, 4, 5]);
    expect(selectRows(['1:6:2'], 5)).toEqual([1, 3, 5]);
    expect(() => selectRows(['0'], 5)).toThrow(/does not exist/);
    expect(() => selectRows(['a-b'], 5)).toThrow(/cannot read/);
  });

  it('names: job_name wins; else distinct stems, node count and short differing values; ≤ 30 chars + index', () => {
    const row = (
      index: number,
      files: string[],
      cells: Record<string, string>,
      jobName?: string,
    ): BulkRow => ({
      index,
      line: index + 1,
      files,
      cells,
      jobName,
      missable: [],
    });
    const names = rowNames([
      row(1, ['/c/base.yaml', '/c/slurm.yaml'], { NUM_NODES: '2', TP: '8' }),
      row(2, ['/c/base.yaml', '/c/k8s.yaml'], { NUM_NODES: '4', TP: '8' }),
      row(12, ['/c/base.yaml'], {}, 'my job/with spaces and a very long name indeed'),
    ]);
    expect(names[0]).toBe('slurm_2n_001');
    expect(names[1]).toBe('k8s_4n_002');
    expect(names[2]).toBe('my_job_with_spaces_and_a_very_012');
    expect(names[2].length).toBeLessThanOrEqual(34);
  });
});
