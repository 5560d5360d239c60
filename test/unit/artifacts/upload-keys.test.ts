/** Upload keys, the `from`/`to` expression context, replica suffixes, `from` globs and URL redaction (artifacts-batch.md B1–B2). */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRecipe } from '../../../src/config/load.js';
import { SflowError, formatLocation } from '../../../src/config/errors.js';
import { backendCatalog } from '../../../src/backends/registry.js';
import { buildPlan } from '../../../src/plan/build.js';
import { insertBeforeExtension, joinKey, uploadKey } from '../../../src/plan/uploads.js';
import type { PlannedUpload } from '../../../src/plan/types.js';
import { expandFrom, uploadSources } from '../../../src/uploads/glob.js';
import { describeError, isTransient } from '../../../src/uploads/put-object.js';
import { redactUrl } from '../../../src/util/redact.js';

const spec = (over: Partial<PlannedUpload>): PlannedUpload => ({
  target: 's',
  from: '/x',
  onError: 'warn',
  renameForReplica: false,
  fromTemplate: '/x',
  ...over,
});

describe('keys', () => {
  it('to omitted → basename; ending in / → directory; else the literal key', () => {
    expect(uploadKey(spec({}), 'results.csv', 't')).toBe('results.csv');
    expect(uploadKey(spec({ to: 'main/' }), 'results.csv', 't')).toBe('main/results.csv');
    expect(uploadKey(spec({ to: 'main/r.csv' }), 'results.csv', 't')).toBe('main/r.csv');
  });
  it('replicas: _<replica name> before the extension (also for an omitted to)', () => {
    const r = spec({ renameForReplica: true });
    expect(uploadKey({ ...r, to: 'main/results.csv' }, 'x', 'benchmark_0')).toBe(
      'main/results_benchmark_0.csv',
    );
    expect(uploadKey(r, 'results.csv', 'benchmark_0')).toBe('results_benchmark_0.csv');
    expect(insertBeforeExtension('a.b/noext', '_r')).toBe('a.b/noext_r');
    expect(insertBeforeExtension('.hidden', '_r')).toBe('.hidden_r');
  });
  it('prefix joins with exactly one slash', () => {
    expect(joinKey('runs/1/', 'a.txt')).toBe('runs/1/a.txt');
    expect(joinKey('runs/1', '/a.txt')).toBe('runs/1/a.txt');
    expect(joinKey('', 'a.txt')).toBe('a.txt');
  });
});

describe('`to` expression context (B1: resolved per task with task.*, workflow.* and env.*)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sflow-upctx-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  /** A one-task recipe on a 3-node Slurm placeholder (2 nodes for the task) with one upload `to`. */
  const planTo = (to: string) => {
    const file = join(dir, 'r.yaml');
    writeFileSync(
      file,
      'version: "0.1"\n' +
        'variables:\n  V: vee\n' +
        'backends:\n  - name: s\n    type: slurm\n    account: acc\n    partition: p\n    time: "00:10:00"\n    default: true\n    nodes: 3\n' +
        'operators:\n  - name: op1\n    type: srun\n' +
        'storage:\n  - name: st\n    type: s3\n    bucket: b\n' +
        'workflow:\n  name: wf\n  tasks:\n    - name: a\n      operator: op1\n      script: ["true"]\n' +
        '      resources: { nodes: { count: 2 } }\n' +
        `      uploads:\n        - target: st\n          from: out.txt\n          to: '${to}'\n`,
    );
    const loaded = loadRecipe({ files: [file], set: [], artifacts: [], missable: [] });
    const plan = buildPlan(loaded, {
      workspaceDir: dir,
      dryRun: true,
      runId: 'r1',
      catalog: backendCatalog,
      env: { CTRL_VAR: 'from-driver', V: 'driver-v' },
    });
    return { task: plan.tasks[0], plan };
  };
  const toOf = (to: string) => planTo(to).task.uploads?.[0].to;

  it('task.backend, task.operator, task.assigned_nodes, task.replica_index', () => {
    expect(toOf('${{ task.backend }}/${{ task.operator }}/x')).toBe('s/op1/x');
    expect(toOf('${{ task.assigned_nodes[0] }}+${{ task.assigned_nodes[1] }}/x')).toBe('s-node0+s-node1/x');
    expect(toOf('n${{ task.assigned_nodes | length }}/r${{ task.replica_index }}/x')).toBe('n2/r0/x');
  });

  it('workflow.name, workflow.output_dir (the run directory) and workflow.run_id', () => {
    const { task, plan } = planTo('${{ workflow.name }}/${{ workflow.run_id }}/x');
    expect(task.uploads?.[0].to).toBe('wf/r1/x');
    expect(toOf('${{ workflow.output_dir }}/x')).toBe(`${plan.paths.runDir}/x`);
  });

  it("env.<VAR>: the driver's environment, overridden by the task's own (variables, SFLOW_*)", () => {
    const { task } = planTo('${{ env.CTRL_VAR }}/${{ env.V }}/x');
    expect(task.uploads?.[0].to).toBe('from-driver/vee/x');
    expect(toOf('${{ env.SFLOW_TASK_OUTPUT_DIR }}/x')).toBe(`${task.outputDir}/x`);
  });

  it('an unknown name is a located plan error naming the upload field', () => {
    let err: unknown;
    try {
      planTo('${{ task.nosuch }}/x');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SflowError);
    const e = err as SflowError;
    expect(e.code).toBe('plan.undefined');
    expect(e.message).toMatch(/\$\{\{ task\.nosuch \}\}.*workflow\.tasks\[0\]\.uploads\[0\]\.to/);
    expect(formatLocation(e.location)).toMatch(/r\.yaml:29:15$/);
  });
});

describe('from globs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sflow-glob-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'sub', 'deep'), { recursive: true });
  for (const f of ['a.json', 'b.json', 'c.txt', 'sub/d.json', 'sub/deep/e.json'])
    writeFileSync(join(dir, f), f);

  it('*, ?, [..] within a segment; ** across directories; files only, sorted', () => {
    expect(expandFrom(join(dir, '*.json'), '/')).toEqual([join(dir, 'a.json'), join(dir, 'b.json')]);
    expect(expandFrom(join(dir, '?.txt'), '/')).toEqual([join(dir, 'c.txt')]);
    expect(expandFrom(join(dir, '[ab].json'), '/')).toEqual([join(dir, 'a.json'), join(dir, 'b.json')]);
    // [!…] negates the set (as in the shell): every one-letter name but a
    expect(expandFrom(join(dir, '[!a].json'), '/')).toEqual([join(dir, 'b.json')]);
    expect(expandFrom(join(dir, '[!a-b].*'), '/')).toEqual([join(dir, 'c.txt')]);
    expect(expandFrom(join(dir, '**', '[!ab].json'), '/')).toEqual(
      ['sub/d.json', 'sub/deep/e.json'].map((f) => join(dir, f)),
    );
    expect(expandFrom(join(dir, '**', '*.json'), '/')).toEqual(
      ['a.json', 'b.json', 'sub/d.json', 'sub/deep/e.json'].map((f) => join(dir, f)),
    );
    expect(expandFrom(join(dir, '*'), '/')).not.toContain(join(dir, 'sub'));
  });
  it('plain paths: relative to the base, a directory or a missing file matches nothing', () => {
    expect(expandFrom('c.txt', dir)).toEqual([join(dir, 'c.txt')]);
    expect(expandFrom('sub', dir)).toEqual([]);
    expect(expandFrom('nope.txt', dir)).toEqual([]);
  });
  it('an upload from a folder: every file below it, named by its path relative to the folder', () => {
    expect(uploadSources('sub', dir)).toEqual({
      folder: true,
      files: [
        { path: join(dir, 'sub', 'd.json'), name: 'd.json' },
        { path: join(dir, 'sub', 'deep', 'e.json'), name: 'deep/e.json' },
      ],
    });
    expect(uploadSources(join(dir, 'sub'), '/').files).toHaveLength(2);
    // a file or a glob: the file names, as before
    expect(uploadSources('*.json', dir)).toEqual({
      folder: false,
      files: ['a.json', 'b.json'].map((f) => ({ path: join(dir, f), name: f })),
    });
    expect(uploadSources('nope', dir)).toEqual({ folder: false, files: [] });
  });
});

describe('errors and URLs', () => {
  it('transient: no HTTP answer, 5xx, 429, throttling; not: 4xx refusals, missing credentials', () => {
    expect(isTransient(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
      true,
    );
    expect(isTransient({ name: 'InternalError', $metadata: { httpStatusCode: 500 } })).toBe(true);
    expect(isTransient({ name: 'SlowDown', $metadata: { httpStatusCode: 503 } })).toBe(true);
    expect(isTransient({ name: 'NoSuchBucket', $metadata: { httpStatusCode: 404 } })).toBe(false);
    expect(isTransient({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } })).toBe(false);
    expect(isTransient({ name: 'CredentialsProviderError', message: 'Could not load credentials' })).toBe(
      false,
    );
  });
  it('error text never carries the secret key or session token', () => {
    const env = { AWS_SECRET_ACCESS_KEY: 'TOPSECRETKEY', AWS_SESSION_TOKEN: 'SESSIONTOK' };
    const e = {
      name: 'Weird',
      message: 'signature for TOPSECRETKEY and SESSIONTOK',
      $metadata: { httpStatusCode: 400 },
    };
    expect(describeError(e, env)).toBe('Weird: signature for *** and *** (HTTP 400)');
  });
  it('redactUrl hides passwords and query values', () => {
    expect(redactUrl('https://u:p@h.example/x?token=abc&b=1')).toBe(
      'https://u:***@h.example/x?token=***&b=***',
    );
    expect(redactUrl('http://127.0.0.1:9000')).toBe('http://127.0.0.1:9000/');
  });
});
