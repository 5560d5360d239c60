/**
 * `SFLOW_BACKEND_JOB_ID` and `SFLOW_TASK_NODE_NAME` on the local backend (the original tool sets
 * them from Slurm; sflow sets them everywhere): the job id is the run id where the backend has no
 * engine job, the node name is the node the plan put the task on, as SFLOW_TASK_ASSIGNED_NODE_NAMES
 * spells it. (Slurm, Docker and Kubernetes: their engine suites.)
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sflow } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch.js';

const dir = scratchDir('sflow-job-env-');

describe('job id and node name on the local backend', () => {
  it('the run id, and the node the plan chose (the backend’s second node)', () => {
    const recipe = join(dir, 'env.yaml');
    writeFileSync(
      recipe,
      [
        "version: '0.1'",
        'backends:',
        '  - {name: box, type: local, default: true, nodes: 2}',
        'workflow:',
        '  name: job_env',
        '  tasks:',
        '    - name: show',
        '      resources: {nodes: {indices: [1]}}',
        '      script: [\'echo "job=$SFLOW_BACKEND_JOB_ID node=$SFLOW_TASK_NODE_NAME of $SFLOW_TASK_ASSIGNED_NODE_NAMES"\']',
        '',
      ].join('\n'),
    );
    const r = sflow(['run', '-f', recipe], { cwd: dir });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const [runId] = readdirSync(join(dir, 'sflow_output'));
    expect(readFileSync(join(dir, 'sflow_output', runId, 'show', 'show.log'), 'utf8')).toBe(
      `job=${runId} node=localhost-1 of localhost-1\n`,
    );
  });
});
