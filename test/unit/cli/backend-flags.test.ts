/**
 * Backends own their command-line flags and their batch (issue 26): the CLI declares `run` and
 * `recover` flags from the backend registry, each kind applies its own `sflow run` flags to the
 * recipe, and `sflow batch` reaches Slurm through the registry's batch scheduler.
 */
import { describe, expect, it } from 'vitest';
import {
  applyBackendRunFlags,
  BACKEND_KINDS,
  backendCliFlags,
  batchScheduler,
} from '../../../src/backends/registry.js';
import { sflow } from '../../helpers/cli.js';
import { lightBackendCliFlags } from '../../../src/backends/cli-flags.js';
import type { Recipe } from '../../../src/config/schema/index.js';

/** the loose backends of a test as the validated recipe's (only the fields the code reads) */
const asRecipe = (r: { backends: object[] }) => r as unknown as Pick<Recipe, 'backends'>;

describe('backend flags from the registry', () => {
  it('sflow run --help and recover --help list every flag the kinds declare for them', () => {
    const run = sflow(['run', '--help']);
    expect(run.code).toBe(0);
    const recover = sflow(['recover', '--help']);
    expect(recover.code).toBe(0);
    const declared = Object.values(BACKEND_KINDS).flatMap((k) => k.cliFlags ?? []);
    expect(declared.length).toBeGreaterThanOrEqual(8);
    for (const f of declared) {
      const long = /--[\w-]+/.exec(f.flags)![0];
      for (const [cmd, help] of [
        ['run', run.stdout],
        ['recover', recover.stdout],
      ] as const)
        expect(help.includes(`${long} `) || help.includes(`${long}\n`), `${cmd} --help: ${long}`).toBe(
          f.commands.includes(cmd),
        );
    }
  });

  it("the light flag list (read by --help without the registry) is the registry kinds' own", () => {
    for (const c of ['run', 'recover'] as const) expect(lightBackendCliFlags(c)).toEqual(backendCliFlags(c));
  });

  it('backendCliFlags gives each command its own flags, once each', () => {
    const run = backendCliFlags('run').map((f) => f.flags);
    expect(run).toContain('-e, --extra-args <arg>');
    expect(run).toContain('--extra-docker-args <arg>');
    expect(run).toContain('--kubeconfig <path>');
    expect(new Set(run).size).toBe(run.length);
    const recover = backendCliFlags('recover').map((f) => f.flags);
    expect(recover).toContain('--kube-context <name>');
    expect(recover).not.toContain('-e, --extra-args <arg>');
  });

  it("each kind applies its own run flags to the recipe (Slurm -e, Docker --extra-docker-args, a batch job's GPUs)", () => {
    const recipe = {
      backends: [
        { name: 's', type: 'slurm', extra_args: ['--exclusive'] },
        { name: 'd', type: 'docker', extra_args: ['--shm-size', '1g'] },
        { name: 'l', type: 'local' },
      ],
    };
    const lines = applyBackendRunFlags(
      asRecipe(recipe),
      { extraArgs: ['--exclusive', '-G', '1'], extraDockerArgs: ['--shm-size=8g'] },
      { SFLOW_SLURM_GPUS_PER_NODE: '4' },
    );
    expect(recipe.backends[0]).toMatchObject({ extra_args: ['--exclusive', '-G', '1'], gpus_per_node: 4 });
    expect(recipe.backends[1]).toMatchObject({ extra_args: ['--shm-size=8g'] });
    expect(recipe.backends[2]).toEqual({ name: 'l', type: 'local' });
    expect(lines.join('\n')).toMatch(/-e --exclusive: backend 's' already passes --exclusive/);
    expect(lines.join('\n')).toMatch(
      /--extra-docker-args: backend 'd': --shm-size=8g replaces --shm-size 1g/,
    );
    // nothing given, nothing changed
    const plain = { backends: [{ name: 's', type: 'slurm' }] };
    expect(applyBackendRunFlags(asRecipe(plain), {}, {})).toEqual([]);
    expect(plain.backends[0]).toEqual({ name: 's', type: 'slurm' });
  });

  it('sflow batch finds its scheduler through the kind whose capability says batch', async () => {
    const kinds = Object.values(BACKEND_KINDS).filter((k) => k.capabilities.batch);
    expect(kinds.map((k) => k.type)).toEqual(['slurm']);
    const s = batchScheduler();
    expect(s).toBe(kinds[0].batch);
    // the calls go through the caller handed in (a login node over SSH, here a recorder)
    const calls: string[][] = [];
    const call = (tool: string, args: string[]) => {
      calls.push([tool, ...args]);
      const stdout =
        tool === 'sinfo' ? 'debug\nbatch*\n' : tool === 'sbatch' ? 'Submitted batch job 42\n' : 'acct\n';
      return Promise.resolve({
        exitCode: 0,
        signal: null,
        stdout,
        stderr: '',
        durationMs: 1,
        timedOut: false,
        attempts: 1,
        ok: true,
      });
    };
    expect(await s.defaultPartition(call)).toBe('batch');
    expect(await s.defaultAccount(call, { USER: 'me' })).toBe('acct');
    expect(await s.submit('/tmp/job.sh', call)).toEqual({ jobId: '42', output: 'Submitted batch job 42' });
    expect(calls.map((c) => c[0])).toEqual(['sinfo', 'sacctmgr', 'sbatch']);
    expect(calls[1]).toContain('user=me');
  });
});
