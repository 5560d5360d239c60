/**
 * Nothing silent: every recipe field (from the schema), backend and operator type, CLI flag (from
 * the command definitions) and artifact scheme is either executed today (IMPLEMENTED below) or
 * covered by a row of src/plan/not-yet.ts, which a run refuses or warns about. A new field or flag
 * without either fails here. README's "What runs today" table lists the same rows.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BACKEND_KINDS, backendCliFlags } from '../../../src/backends/registry.js';
import { buildProgram } from '../../../src/cli/main.js';
import { declareBackendFlags } from '../../../src/cli/backend-flags.js';
import { BACKEND_TYPES, OPERATOR_TYPES, recipeJsonSchema } from '../../../src/config/schema/index.js';
import { NOT_YET } from '../../../src/plan/not-yet.js';
import { REPO } from '../../helpers/cli.js';

type J = Record<string, any>;

const kinds = Object.values(BACKEND_KINDS);
/** `backends:<type>` of every type a run creates; the registry refuses the others before anything starts */
const RUNNABLE_BACKENDS = kinds.filter((k) => k.create).map((k) => `backends:${k.type}`);
const REFUSED_BACKENDS = new Set(kinds.filter((k) => !k.create).map((k) => `backends:${k.type}`));

/** What runs today: each entry is executed by a real run (see README "What runs today"). */
const IMPLEMENTED = new Set([
  // top level
  'version',
  'variables',
  'artifacts',
  'backends',
  'operators',
  'workflow',
  // workflow
  'workflow.name',
  'workflow.tasks',
  'workflow.variables',
  'workflow.timeout', // enforced: src/runtime/deadline.ts
  // tasks
  'workflow.tasks.*.name',
  'workflow.tasks.*.script',
  'workflow.tasks.*.depends_on',
  'workflow.tasks.*.required_by',
  'workflow.tasks.*.operator',
  'workflow.tasks.*.backend',
  'workflow.tasks.*.resources',
  'workflow.tasks.*.replicas',
  'workflow.tasks.*.retries',
  'workflow.tasks.*.probes',
  'workflow.tasks.*.outputs',
  'workflow.tasks.*.result',
  'workflow.tasks.*.fail_fast',
  'workflow.tasks.*.assert',
  'workflow.tasks.*.monitor',
  'workflow.tasks.*.uploads',
  'workflow.monitor',
  'workflow.upload_all',
  'storage',
  // operator types (backend types: RUNNABLE_BACKENDS below)
  'operators:k8s',
  'operators:k8s_mpi',
  'operators:bash',
  'operators:python',
  'operators:ssh',
  'operators:srun',
  'operators:docker_run',
  // artifact schemes: local paths, inline content, and other schemes passed on as the raw URI
  'fs://',
  'file://',
  'http://',
  'https://',
  's3://',
  'hf://', // downloaded from the Hub: src/artifacts/hf-hub.ts
  'huggingface://',
  'docker://', // made present on the engines: src/artifacts/docker-images.ts
  // command line
  '--version',
  '--file',
  '--set',
  '--artifact',
  '--tui',
  '--tui-refresh',
  '--enable-workflow-monitor',
  '--enable-task-monitor',
  '--bulk-input',
  '--row',
  '--validate',
  '--list',
  '--force',
  '--target',
  '--global',
  '--project-dir',
  '--sflow-version',
  '--branch',
  '--repo',
  '--registry',
  '--sflow-index-url', // sflow upgrade (src/cli/upgrade.ts)
  '--sflow-source-path',
  '--missable-tasks',
  '--dry-run',
  '--workspace-dir',
  '--output-dir',
  '--log-level',
  '--verbose', // = --log-level debug
  '--skip-artifact-check',
  '--wait-for-gpus',
  '--extra-args', // appended to slurm backends' extra_args: src/backends/slurm/extra-args.ts
  '--extra-docker-args', // merged into docker backends' extra_args: src/backends/docker/extra-args.ts
  '--output',
  '--resolve',
  '--format',
  '--show-variables',
  // sflow batch: src/cli/batch*.ts
  '--partition',
  '--account',
  '--time',
  '--nodes',
  '--gpus-per-node',
  '--job-name',
  '--sbatch-extra-args',
  '--sbatch-output',
  '--sbatch-error',
  '--sbatch-path',
  '--submit',
  '--bulk-submit',
  // Kubernetes (src/backends/kubernetes/kube-options.ts)
  '--kubeconfig',
  '--kube-context',
  '--kube-namespace',
  '--kube-skip-pvc',
  '--extra-kubectl-args',
  '--extra-kubectl-apply-args',
  '--grace-seconds', // sflow recover
  // --ssh (run, compose), watch, fetch
  '--ssh',
  '--ssh-remote-root',
  '--ssh-follow',
  '--ssh-fetch',
  '--ssh-tty',
  '--once',
  '--resume', // sflow run --resume (with --force)
  '--secret-file', // run, --resume, batch, --ssh: test/integration/secrets-no-ps.test.ts
  '--all',
  // backend types whose kind creates instances (the registry is where a type starts to run)
  ...RUNNABLE_BACKENDS,
]);

/** Artifact schemes the spec knows (artifacts-batch.md A2); others are passed on like s3://. */
const SCHEMES = ['fs://', 'file://', 'http://', 'https://', 'hf://', 'huggingface://', 'docker://', 's3://'];

function recipeFields(): string[] {
  const root = recipeJsonSchema() as J;
  const wf = root.properties.workflow as J;
  const taskItem = (wf.properties.tasks as J).anyOf[0].items as J;
  return [
    ...Object.keys(root.properties as J),
    ...Object.keys(wf.properties as J).map((k) => `workflow.${k}`),
    ...Object.keys(taskItem.properties as J).map((k) => `workflow.tasks.*.${k}`),
    ...BACKEND_TYPES.map((t) => `backends:${t}`),
    ...OPERATOR_TYPES.map((t) => `operators:${t}`),
  ];
}

function cliFlags(): string[] {
  const program = buildProgram();
  // the backend types' flags (declared when run/recover is dispatched)
  for (const c of program.commands) declareBackendFlags(c, backendCliFlags);
  const flags = [program, ...program.commands].flatMap((c) => c.options.map((o) => o.long ?? o.short ?? ''));
  return [...new Set(flags)].filter((f) => f && f !== '--help');
}

const covered = new Map(NOT_YET.flatMap((r) => r.covers.map((c) => [c, r.id] as const)));

describe('every recipe field, flag and artifact scheme is executed or refused/warned', () => {
  const all = [...recipeFields(), ...cliFlags(), ...SCHEMES];

  it('finds the fields and flags it checks', () => {
    expect(all).toEqual(
      expect.arrayContaining(['workflow.tasks.*.monitor', '--tui', 'backends:slurm', 'hf://']),
    );
    expect(all.length).toBeGreaterThan(60);
  });

  it.each(all)('%s', (name) => {
    const where = [
      IMPLEMENTED.has(name) ? 'implemented' : '',
      covered.has(name) ? `not-yet row '${covered.get(name)}'` : '',
      REFUSED_BACKENDS.has(name) ? 'refused by the registry (no create)' : '',
    ]
      .filter(Boolean)
      .join(' and ');
    expect(
      where,
      `${name} must be in IMPLEMENTED (runs today) or covered by a row of src/plan/not-yet.ts`,
    ).not.toBe('');
    expect(where, `${name} cannot be both implemented and not yet`).not.toContain(' and ');
  });

  it('no row or IMPLEMENTED entry names something that does not exist', () => {
    const known = new Set(all);
    expect([...IMPLEMENTED].filter((x) => !known.has(x))).toEqual([]);
    expect([...covered.keys()].filter((x) => !known.has(x))).toEqual([]);
  });

  it('row ids are unique', () => {
    expect(new Set(NOT_YET.map((r) => r.id)).size).toBe(NOT_YET.length);
  });
});

describe("README's What runs today table", () => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## What runs today'));
  const rows = section
    .slice(0, section.indexOf('\n## ', 3) > 0 ? section.indexOf('\n## ', 3) : undefined)
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| feature') && !l.startsWith('|---'))
    .map((l) => l.split(' | ').map((c) => c.replace(/^\| ?| ?\|$/g, '').trim()));

  it('lists every not-yet row with its status and what a run does about it', () => {
    for (const r of NOT_YET) {
      const line = rows.find(([feature]) => feature === r.feature);
      expect(line, `README row for ${r.id}: ${r.feature}`).toBeDefined();
      expect(line![1]).toBe(`${r.today} — a run ${r.action === 'refuse' ? 'refuses it' : 'warns'}`);
    }
  });

  it('has no "plans only" / "not yet" / "ignored" entry without a row (kept in step)', () => {
    const features = new Set(NOT_YET.map((r) => r.feature));
    const stale = rows
      .filter(([, today]) => /^(plans only|not yet|ignored)/.test(today ?? ''))
      .filter(([f]) => !features.has(f));
    expect(stale).toEqual([]);
  });
});
