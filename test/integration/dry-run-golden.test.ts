/**
 * Golden output of `sflow run --dry-run` (stdout, stderr and exit code) for every spec example and
 * every compat case. The fixtures under test/fixtures/dry-run-golden are sflow's own output,
 * recorded before the run session / backend contract refactor (issue 7) so that refactors of
 * plan, operators and backends can be checked to leave the plan text unchanged.
 *
 * Paths that depend on where the test runs are replaced by <CWD>, <OUT> and <SHARED>, the time and
 * random part of a run id by <STAMP>, its hash in Kubernetes object names by <RUNHASH>; nvidia-smi
 * is shadowed by a stub that finds no GPU, so a GPU machine prints the same plan.
 * `SFLOW_UPDATE_GOLDEN=1 npx vitest run test/integration/dry-run-golden.test.ts` rewrites them.
 *
 * The cases run through the CLI's entry in-process (test/helpers/cli-inprocess.ts: same parsing,
 * printing and exit codes, without starting Node ~74 times); one case also runs the built CLI in
 * a child process as the end-to-end check, against the same golden file.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runNames } from '../../src/backends/kubernetes/names.js';
import { REPO, SHARED, sflow, type CliResult } from '../helpers/cli.js';
import { sflowInProcess } from '../helpers/cli-inprocess.js';

const EXAMPLES = join(SHARED, 'spec', 'examples');
const COMPAT = join(SHARED, 'compat');
const GOLDEN = join(REPO, 'test', 'fixtures', 'dry-run-golden');
const UPDATE = process.env.SFLOW_UPDATE_GOLDEN === '1';
const missing = !existsSync(EXAMPLES) || !existsSync(join(COMPAT, 'cases.txt'));
if (missing && process.env.SFLOW_REQUIRE_SHARED === '1')
  throw new Error(`SFLOW_REQUIRE_SHARED=1 but ${SHARED} (spec examples, compat cases) is missing`);

const scratch = mkdtempSync(join(tmpdir(), 'sflow-golden-'));
const stubBin = join(scratch, 'bin');
mkdirSync(stubBin);
writeFileSync(join(stubBin, 'nvidia-smi'), '#!/bin/sh\necho "No devices were found"\nexit 6\n');
chmodSync(join(stubBin, 'nvidia-smi'), 0o755);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** the dry-run's credential warning for storage targets reads these: none, wherever the test runs */
const NO_AWS_CREDENTIALS = {
  AWS_ACCESS_KEY_ID: '',
  AWS_SECRET_ACCESS_KEY: '',
  AWS_PROFILE: '',
  AWS_WEB_IDENTITY_TOKEN_FILE: '',
  AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: '',
  AWS_CONTAINER_CREDENTIALS_FULL_URI: '',
  AWS_SHARED_CREDENTIALS_FILE: join(scratch, 'no-aws-credentials'),
  AWS_CONFIG_FILE: join(scratch, 'no-aws-config'),
};

interface Case {
  name: string;
  args: string[];
  cwd: 'scratch' | 'compat';
}

function exampleCases(): Case[] {
  const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.yaml'));
  const out: Case[] = files.map((f) => ({
    name: `examples/${f.replace(/\.yaml$/, '')}`,
    args: ['-f', join(EXAMPLES, f)],
    cwd: 'scratch',
  }));
  const m = (f: string): string[] => ['-f', join(EXAMPLES, '11_modular', f)];
  out.push(
    {
      name: 'examples/11_modular-missable',
      args: [...m('base.yaml'), ...m('server.yaml'), ...m('bench.yaml'), '-M', 'agg_server'],
      cwd: 'scratch',
    },
    {
      name: 'examples/11_modular-attached',
      args: [...m('base.yaml'), ...m('server_attached.yaml'), ...m('bench_plain.yaml')],
      cwd: 'scratch',
    },
  );
  // plan errors (located) guarded too
  out.push(
    {
      name: 'examples/12-gpu-oversubscribed',
      args: ['-f', join(EXAMPLES, '12_gpu_slices_and_task_context.yaml'), '--set', 'DECODE_GPUS=5'],
      cwd: 'scratch',
    },
    {
      name: 'examples/04-zero-replicas',
      args: ['-f', join(EXAMPLES, '04_replicas.yaml'), '--set', 'SHARDS=0'],
      cwd: 'scratch',
    },
  );
  return out;
}

function compatCases(): Case[] {
  return readFileSync(join(COMPAT, 'cases.txt'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => {
      const [id, , args] = l.split('|').map((x) => x.trim());
      const hash = createHash('sha1').update(args).digest('hex').slice(0, 8);
      return {
        name: `compat/${id}-${hash}`,
        args: [...args.split(/\s+/), '--skip-artifact-check'],
        cwd: 'compat' as const,
      };
    });
}

type Runner = (
  args: string[],
  opts: { cwd: string; env: Record<string, string> },
) => CliResult | Promise<CliResult>;

async function runCase(c: Case, runner: Runner): Promise<string> {
  const cwd = c.cwd === 'compat' ? COMPAT : mkdtempSync(join(scratch, 'cwd-'));
  const out = mkdtempSync(join(scratch, 'out-'));
  const args = ['run', ...c.args, '--dry-run', ...(c.cwd === 'compat' ? ['--output-dir', out] : [])];
  const r = await runner(args, {
    cwd,
    env: {
      PATH: `${stubBin}:${process.env.PATH ?? ''}`,
      COLUMNS: '120',
      SFLOW_TASK_OUTPUT: 'never',
      SFLOW_DOCKER_CLI: '', // docker_run lines name `docker` wherever the test runs
      ...NO_AWS_CREDENTIALS,
    },
  });
  const here = c.cwd === 'compat' ? '<COMPAT>' : '<CWD>';
  const pairs: Array<[string, string]> = [
    [out, '<OUT>'],
    [realpathSync(cwd), here],
    [cwd, here],
    [realpathSync(SHARED), '<SHARED>'],
    [SHARED, '<SHARED>'],
  ];
  // Kubernetes object names in the pod manifests carry a hash of the run id
  for (const id of new Set(
    [...`${r.stdout}\n${r.stderr}`.matchAll(/sflow\/run-id: (\S+)/g)].map((m) => m[1]),
  ))
    pairs.push([runNames(id).hash, '<RUNHASH>']);
  // the run id a dry-run makes (shown where an upload key uses workflow.run_id) carries the time
  const norm = (s: string): string =>
    pairs
      .reduce((acc, [from, to]) => acc.split(from).join(to), s)
      .replace(/-\d{8}-\d{6}-[0-9a-f]{6}\b/g, '-<STAMP>')
      // Docker container names carry the driver's pid
      .replace(/\bsflow-p\d+-/g, 'sflow-p<PID>-');
  return `exit: ${r.code}\n--- stdout\n${norm(r.stdout)}\n--- stderr\n${norm(r.stderr)}`;
}

describe.skipIf(missing)('dry-run output is unchanged (golden files)', () => {
  const cases = missing ? [] : [...exampleCases(), ...compatCases()];
  it('covers every example and compat case', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const file = join(GOLDEN, `${c.name}.txt`);
    const got = await runCase(c, sflowInProcess);
    if (UPDATE) {
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, got);
      return;
    }
    expect(existsSync(file), `golden file ${file} (SFLOW_UPDATE_GOLDEN=1 records it)`).toBe(true);
    expect(got).toBe(readFileSync(file, 'utf8'));
  });

  it('end to end: the built CLI in a child process prints the first case as its golden file', async () => {
    const c = cases[0];
    const got = await runCase(c, sflow);
    if (UPDATE) return; // recorded in-process above
    expect(got).toBe(readFileSync(join(GOLDEN, `${c.name}.txt`), 'utf8'));
  });
});

describe.skipIf(!missing)('dry-run golden files', () => {
  it('skipped: ../shared (spec examples and compat cases) is not present', () => {
    expect(missing).toBe(true);
  });
});
