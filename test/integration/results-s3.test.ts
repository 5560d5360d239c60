/**
 * `sflow results collect s3://…` against a real S3-compatible server (s3rver, in this process):
 * runs of the stand-in serving sweep upload their folder with `workflow.upload_all`; collecting the
 * bucket prefix gives the same table as collecting the run folders on disk (but for `run_dir`,
 * which says where each run was read from), and a second collect fetches nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sflowAsync } from '../helpers/cli-async.js';
import { scratchDir } from '../helpers/scratch.js';
import { startS3Server, S3RVER_ACCESS_KEY_ID, type S3TestServer } from '../helpers/s3-server.js';
import { SERVING_SWEEP } from '../helpers/results-runs.js';

let s3: S3TestServer | undefined;
let work: string;

function awsEnv(home: string, endpoint: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('AWS_') && !k.startsWith('SFLOW_UPLOAD')) env[k] = v;
  return {
    ...env,
    HOME: home,
    AWS_ACCESS_KEY_ID: S3RVER_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: 'not-checked-by-s3rver',
    AWS_REGION: 'us-east-1',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: join(home, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-aws-credentials'),
    AWS_ENDPOINT_URL: endpoint,
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    SFLOW_UPLOAD_ATTEMPTS: '2',
    SFLOW_UPLOAD_RETRY_DELAY_S: '0.2',
  };
}

beforeAll(async () => {
  work = scratchDir('sflow-results-s3-');
  s3 = await startS3Server('sflow-runs');
}, 60_000);
afterAll(async () => {
  await s3?.stop();
});

describe('collect from S3', () => {
  it('reads the runs upload_all archived and yields the same table as the local folders', async () => {
    const env = awsEnv(work, s3!.endpoint);
    const recipe = join(work, 'uploaded-sweep.yaml');
    writeFileSync(
      recipe,
      readFileSync(SERVING_SWEEP, 'utf8').replace(
        'workflow:\n  name: serving_sweep\n',
        `storage:\n  - name: runs\n    type: s3\n    bucket: sflow-runs\n    prefix: team/\nworkflow:\n  name: serving_sweep\n  upload_all:\n    target: runs\n    to: "sweeps/\${{ workflow.run_id }}.zip"\n`,
      ),
    );
    const out = join(work, 'out');
    for (let i = 0; i < 2; i++) {
      const r = await sflowAsync(['run', '-f', recipe, '--output-dir', out], { env, timeoutMs: 120_000 });
      expect(r.code, r.stderr).toBe(0);
    }
    const fromS3 = await sflowAsync(
      ['results', 'collect', 's3://sflow-runs/team/sweeps/', '-d', join(work, 's3')],
      { env },
    );
    expect(fromS3.code, fromS3.stderr).toBe(0);
    expect(fromS3.stdout).toMatch(/2 new or changed run\(s\), 8 row\(s\)/);
    const local = await sflowAsync(['results', 'collect', out, '-d', join(work, 'local')], { env });
    expect(local.code, local.stderr).toBe(0);
    const all = async (dir: string) => {
      const q = await sflowAsync(
        [
          'results',
          'query',
          'SELECT * EXCLUDE (run_dir) FROM results ORDER BY run_id, task',
          '-d',
          dir,
          '--format',
          'json',
        ],
        { env },
      );
      expect(q.code, q.stderr).toBe(0);
      return JSON.parse(q.stdout) as Record<string, unknown>[];
    };
    const a = await all(join(work, 's3'));
    expect(a).toHaveLength(8);
    expect(a.every((r) => typeof r.result_throughput_tok_s === 'number' && r.status === 'COMPLETED')).toBe(
      true,
    );
    expect(a).toEqual(await all(join(work, 'local')));
    const dirs = await sflowAsync(
      [
        'results',
        'query',
        'SELECT DISTINCT run_dir FROM results ORDER BY 1',
        '-d',
        join(work, 's3'),
        '--format',
        'csv',
      ],
      { env },
    );
    expect(dirs.stdout).toMatch(
      /^run_dir\ns3:\/\/sflow-runs\/team\/sweeps\/serving_sweep-[^\n]+\.zip\ns3:\/\/sflow-runs\/team\/sweeps\/serving_sweep-[^\n]+\.zip\n$/,
    );
    const again = await sflowAsync(
      ['results', 'collect', 's3://sflow-runs/team/sweeps/', '-d', join(work, 's3')],
      { env },
    );
    expect(again.stdout).toMatch(/nothing new; 2 run\(s\) found/);
  }, 300_000);

  it('a bucket that does not exist is a clear error, not a stack', async () => {
    const env = awsEnv(work, s3!.endpoint);
    const r = await sflowAsync(['results', 'collect', 's3://no-such-bucket/x/', '-d', join(work, 'nb')], {
      env,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/✗ Workflow failed: listing s3:\/\/no-such-bucket\/x\/: .*bucket/i);
    expect(r.stderr).not.toMatch(/Internal error/);
  });
});
