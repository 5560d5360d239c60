/**
 * `uploads:` and `workflow.upload_all` against a real S3-compatible server (s3rver, in this
 * process, ephemeral port), through the built CLI as a user runs it: a task's log, its
 * result.json and a 20 MiB file (multipart) are read back and compared by SHA-256, replicas get
 * their suffix, the run archive holds the run directory, nothing secret reaches any log, and
 * failures (unknown access key, missing bucket, a server that never answers) are reported,
 * retried where it makes sense, and never hold the run.
 *
 * s3rver does not verify signatures: the one credential check it makes is the access key id, so
 * an unknown key id stands for "bad credentials" here.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventsJsonl } from '../../src/reporters/events-jsonl.js';
import type { RunEvent } from '../../src/events/events.js';
import { sflowAsync } from '../helpers/cli-async.js';
import { BIN } from '../helpers/cli.js';
import { spawn } from 'node:child_process';
import { startS3Server, type S3TestServer } from '../helpers/s3-server.js';

// the pinned SDK runs on Node 20; its notice about future releases is noise here
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const BUCKET = 'sflow-results';
const SECRET = `sflow-test-secret-${process.pid}-${Date.now()}`;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

let s3: S3TestServer;
let client: S3Client;
let dir: string;

beforeAll(async () => {
  s3 = await startS3Server(BUCKET);
  client = new S3Client(s3.clientConfig());
  dir = mkdtempSync(join(tmpdir(), 'sflow-uploads-'));
});
afterAll(async () => {
  client?.destroy();
  await s3?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A clean AWS environment: only what the test gives (no profile, files or instance metadata). */
function awsEnv(over: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('AWS_') && !k.startsWith('SFLOW_UPLOAD')) env[k] = v;
  return {
    ...env,
    HOME: dir,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: SECRET,
    AWS_REGION: 'us-east-1',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: join(dir, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-aws-credentials'),
    // s3rver predates the SDK's default CRC checksums (docs/testing.md)
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    SFLOW_UPLOAD_RETRY_DELAY_S: '0.05',
    ...over,
  };
}

let n = 0;
function write(text: string): { file: string; out: string } {
  const sub = join(dir, `case${n++}`);
  mkdirSync(sub);
  const file = join(sub, 'wf.yaml');
  writeFileSync(file, text);
  return { file, out: join(sub, 'out') };
}

function runDirOf(out: string): string {
  const runs = readdirSync(out).filter((d) => !d.startsWith('.'));
  expect(runs).toHaveLength(1);
  return join(out, runs[0]);
}

function events(runDir: string): RunEvent[] {
  return parseEventsJsonl(readFileSync(join(runDir, 'events.jsonl'), 'utf8'));
}

function uploads(runDir: string, phase: string) {
  return events(runDir).filter(
    (e): e is Extract<RunEvent, { type: 'upload' }> => e.type === 'upload' && e.phase === phase,
  );
}

async function object(key: string): Promise<Buffer> {
  const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return Buffer.from(await got.Body!.transformToByteArray());
}

/** File names in a zip's central directory. */
function zipNames(zip: Buffer): string[] {
  const names: string[] = [];
  for (let i = zip.indexOf('PK\x01\x02'); i >= 0; i = zip.indexOf('PK\x01\x02', i + 46)) {
    const len = zip.readUInt16LE(i + 28);
    names.push(zip.subarray(i + 46, i + 46 + len).toString('utf8'));
  }
  return names;
}

function allText(root: string): string {
  let text = '';
  for (const e of readdirSync(root, { withFileTypes: true, recursive: true })) {
    const p = join(e.parentPath, e.name);
    if (e.isFile() && statSync(p).size < 5_000_000) text += readFileSync(p, 'latin1');
  }
  return text;
}

describe('S3 round trip', () => {
  let runDir: string;
  let res: { code: number | null; stdout: string; stderr: string };

  beforeAll(async () => {
    const { file, out } = write(`version: "0.1"
variables:
  ENDPOINT: http://invalid
  TAG: t1
storage:
  - name: results
    type: s3
    bucket: ${BUCKET}
    endpoint_url: \${{ variables.ENDPOINT }}
    region: us-east-1
    prefix: "runs/\${{ variables.TAG }}/"
workflow:
  name: s3rt
  upload_all:
    target: results
    to: "archive/\${{ workflow.run_id }}.zip"
  tasks:
    - name: bench
      script:
        - echo "throughput 42"
        - printf '{"tput": 42}' > "$SFLOW_TASK_OUTPUT_DIR/metrics.json"
        - head -c 20971520 /dev/urandom > "$SFLOW_TASK_OUTPUT_DIR/big.bin"
      result:
        file: metrics.json
      uploads:
        - target: results
          from: "\${{ task.output_dir }}/*.log"
          to: "\${{ task.name }}/logs/"
        - target: results
          from: "\${{ task.output_dir }}/result.json"
          to: "\${{ task.name }}/result.json"
        - target: results
          from: big.bin
          to: "\${{ task.name }}/"
          on_error: fail
    - name: sweep
      replicas:
        count: 2
      script:
        - echo "replica $SFLOW_REPLICA_INDEX" > "$SFLOW_TASK_OUTPUT_DIR/results.csv"
      uploads:
        - target: results
          from: "\${{ task.output_dir }}/results.csv"
          to: "main/results.csv"
`);
    res = await sflowAsync(['run', '-f', file, '--output-dir', out, '--set', `ENDPOINT=${s3.endpoint}`], {
      env: awsEnv({ SFLOW_UPLOAD_PART_SIZE_MB: '5' }),
      timeoutMs: 120_000,
    });
    runDir = runDirOf(out);
  }, 150_000);

  it('the run completes', () => {
    expect(res.stderr).not.toMatch(/internal error/);
    expect(res.stderr).not.toContain('NodeVersionSupportWarning');
    expect(res.code, res.stderr).toBe(0);
  });

  it("a task's log and result.json come back byte-identical", async () => {
    for (const [key, local] of [
      ['runs/t1/bench/logs/bench.log', 'bench/bench.log'],
      ['runs/t1/bench/result.json', 'bench/result.json'],
    ]) {
      expect(sha256(await object(key))).toBe(sha256(readFileSync(join(runDir, local))));
    }
    expect(JSON.parse((await object('runs/t1/bench/result.json')).toString()).values).toEqual({ tput: 42 });
  });

  it('the 20 MiB file went multipart (4 parts of 5 MiB) and has the same SHA-256', async () => {
    const key = 'runs/t1/bench/big.bin';
    const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(head.ContentLength).toBe(20 * 1024 * 1024);
    const done = uploads(runDir, 'done').find((e) => e.dest === `s3://${BUCKET}/${key}`);
    expect(done?.parts).toBe(4);
    expect(sha256(await object(key))).toBe(sha256(readFileSync(join(runDir, 'bench', 'big.bin'))));
  });

  it('replicas get _<replica name> before the extension', async () => {
    expect((await object('runs/t1/main/results_sweep_0.csv')).toString()).toBe('replica 0\n');
    expect((await object('runs/t1/main/results_sweep_1.csv')).toString()).toBe('replica 1\n');
    expect(res.stderr).toMatch(/Task 'sweep' is replicated: upload .* adds '_<replica name>'/);
  });

  it('upload_all archives the run directory under the resolved key, and leaves no temp zip behind', async () => {
    const runId = runDir.split('/').pop()!;
    const zip = await object(`runs/t1/archive/${runId}.zip`);
    const names = zipNames(zip);
    for (const f of [
      'bench/bench.log',
      'bench/big.bin',
      'bench/result.json',
      'events.jsonl',
      'sflow.log',
      'sflow_summary.log',
    ])
      expect(names).toContain(f);
    expect(readdirSync(join(runDir, '..')).filter((f) => f.endsWith('.zip'))).toEqual([]);
  });

  it('every object is on the event stream, in the summary and on the console', async () => {
    const done = uploads(runDir, 'done').map((e) => e.dest);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'runs/t1/' }));
    expect(done.sort()).toEqual((listed.Contents ?? []).map((o) => `s3://${BUCKET}/${o.Key}`).sort());
    expect(uploads(runDir, 'failed')).toEqual([]);
    const summary = readFileSync(join(runDir, 'sflow_summary.log'), 'utf8');
    expect(summary).toMatch(/^Uploads\n-------\n6\/6 object\(s\) uploaded/m);
    expect(summary).toMatch(
      /^bench +OK +20\.0 MiB +\d+ +[\d.]+s +s3:\/\/sflow-results\/runs\/t1\/bench\/big\.bin$/m,
    );
    expect(res.stdout).toContain(`→ s3://${BUCKET}/runs/t1/bench/big.bin (20.0 MiB`);
  });

  it('the secret access key appears in no file of the run, nor on the console', () => {
    expect(allText(runDir)).not.toContain(SECRET);
    expect(res.stdout + res.stderr).not.toContain(SECRET);
  });
});

describe('uploads.from naming a folder', () => {
  it('uploads every file below it with its relative path; to: without / is a folder too; an empty folder is reported', async () => {
    const { file, out } = write(`version: "0.1"
storage:
  - name: results
    type: s3
    bucket: ${BUCKET}
    endpoint_url: ${s3.endpoint}
    region: us-east-1
    prefix: "runs/folders/"
workflow:
  name: s3folders
  tasks:
    - name: tree
      script:
        - mkdir -p "$SFLOW_TASK_OUTPUT_DIR/sub/deep" "$SFLOW_TASK_OUTPUT_DIR/empty"
        - echo a > "$SFLOW_TASK_OUTPUT_DIR/a.txt"
        - echo b > "$SFLOW_TASK_OUTPUT_DIR/sub/b.txt"
        - echo c > "$SFLOW_TASK_OUTPUT_DIR/sub/deep/c.txt"
        - ln -s "$SFLOW_TASK_OUTPUT_DIR/sub" "$SFLOW_TASK_OUTPUT_DIR/sub/loop"
      uploads:
        - target: results
          from: "\${{ task.output_dir }}"
          to: "\${{ task.name }}/all"
        - target: results
          from: sub
        - target: results
          from: empty
`);
    const r = await sflowAsync(['run', '-f', file, '--output-dir', out], { env: awsEnv() });
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(out);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'runs/folders/' }));
    expect((listed.Contents ?? []).map((o) => o.Key).sort()).toEqual([
      'runs/folders/b.txt',
      'runs/folders/deep/c.txt',
      'runs/folders/tree/all/a.txt',
      'runs/folders/tree/all/sub/b.txt',
      'runs/folders/tree/all/sub/deep/c.txt',
      'runs/folders/tree/all/tree.log',
    ]);
    expect((await object('runs/folders/tree/all/sub/deep/c.txt')).toString()).toBe('c\n');
    // the symbolic link is not followed (it would loop) nor sent
    const failed = uploads(runDir, 'failed');
    expect(failed.map((e) => e.error)).toEqual(['nothing to upload: the folder empty holds no file']);
    expect(readFileSync(join(runDir, 'sflow_summary.log'), 'utf8')).toMatch(/^tree +COMPLETED/m);
  });
});

function smallRecipe(o: {
  bucket?: string;
  endpoint?: string;
  onError?: 'warn' | 'fail';
  uploadAll?: boolean;
}) {
  return write(`version: "0.1"
storage:
  - name: results
    type: s3
    bucket: ${o.bucket ?? BUCKET}
${o.endpoint ? `    endpoint_url: ${o.endpoint}\n` : ''}workflow:
  name: s3fail
${o.uploadAll ? '  upload_all:\n    target: results\n' : ''}  tasks:
    - name: produce
      script:
        - echo data > "$SFLOW_TASK_OUTPUT_DIR/out.txt"
      uploads:
        - target: results
          from: "\${{ task.output_dir }}/out.txt"
${o.onError ? `          on_error: ${o.onError}\n` : ''}    - name: after
      depends_on: [produce]
      script: [echo after]
`);
}

describe('failing uploads are reported, never hold the run', () => {
  it('an unknown access key id: reported once (not retried), the task stays COMPLETED, exit 0', async () => {
    const { file, out } = smallRecipe({ uploadAll: true });
    const r = await sflowAsync(['run', '-f', file, '--output-dir', out], {
      env: awsEnv({ AWS_ENDPOINT_URL: s3.endpoint, AWS_ACCESS_KEY_ID: 'NOT-A-KEY' }),
    });
    expect(r.code, r.stderr).toBe(0);
    const runDir = runDirOf(out);
    const failed = uploads(runDir, 'failed');
    expect(failed.map((e) => e.task ?? 'upload_all')).toEqual(['produce', 'upload_all']);
    expect(failed[0].error).toMatch(/^InvalidAccessKeyId: .* \(HTTP 403\)$/);
    expect(uploads(runDir, 'retry')).toEqual([]);
    expect(r.stderr).toMatch(
      /✗ produce: upload .*out\.txt → s3:\/\/sflow-results\/out\.txt failed: InvalidAccessKeyId.*produce stays COMPLETED/,
    );
    const summary = readFileSync(join(runDir, 'sflow_summary.log'), 'utf8');
    expect(summary).toMatch(/^produce +COMPLETED/m);
    expect(summary).toMatch(/^produce +FAILED +\S+ +1 /m);
    expect(summary).toContain('0/2 object(s) uploaded');
    expect(r.stdout).toContain('✓ after completed');
  });

  it('on_error: fail → the task FAILED, dependents cancelled, exit 1', async () => {
    const { file, out } = smallRecipe({ bucket: 'no-such-bucket', onError: 'fail' });
    const r = await sflowAsync(['run', '-f', file, '--output-dir', out], {
      env: awsEnv({ AWS_ENDPOINT_URL: s3.endpoint }),
    });
    expect(r.code).toBe(1);
    const runDir = runDirOf(out);
    expect(uploads(runDir, 'failed')[0].error).toMatch(/^NoSuchBucket: /);
    const summary = readFileSync(join(runDir, 'sflow_summary.log'), 'utf8');
    expect(summary).toMatch(/^produce +FAILED/m);
    expect(summary).toMatch(/^after +CANCELLED/m);
    expect(r.stdout).toMatch(
      /produce failed \(exit 0\): upload of .*out\.txt to s3:\/\/no-such-bucket\/out\.txt failed: NoSuchBucket/,
    );
  });

  describe('a server that accepts connections and never answers', () => {
    let server: Server;
    let endpoint = '';
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      server = createServer((s) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    });
    afterAll(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    });

    it('each request times out and is retried with backoff, then reported; the run goes on', async () => {
      const { file, out } = smallRecipe({ endpoint });
      const r = await sflowAsync(['run', '-f', file, '--output-dir', out], {
        env: awsEnv({ SFLOW_UPLOAD_REQUEST_TIMEOUT_S: '0.5', SFLOW_UPLOAD_ATTEMPTS: '3' }),
      });
      expect(r.code, r.stderr).toBe(0);
      const runDir = runDirOf(out);
      expect(uploads(runDir, 'retry').map((e) => e.attempt)).toEqual([2, 3]);
      expect(uploads(runDir, 'failed')[0].error).toMatch(/TimeoutError/);
      expect(r.stderr).toMatch(
        /↻ produce: upload s3:\/\/sflow-results\/out\.txt failed \(.*\); retrying in 0\.05s \(attempt 2\)/,
      );
    });

    it('fail-fast while a task that exited 0 uploads: it finishes its upload and ends COMPLETED, as the upload line says', async () => {
      const { file, out } = write(`version: "0.1"
storage:
  - name: results
    type: s3
    bucket: ${BUCKET}
    endpoint_url: ${endpoint}
workflow:
  name: s3ff
  tasks:
    - name: b
      script: ['echo data > "$SFLOW_TASK_OUTPUT_DIR/out.txt"']
      uploads:
        - {target: results, from: out.txt}
    - name: a
      script:
        - 'until [ -e "$SFLOW_WORKFLOW_OUTPUT_DIR/b/out.txt" ]; do sleep 0.1; done; sleep 0.5; exit 3'
`);
      const r = await sflowAsync(['run', '-f', file, '--output-dir', out], {
        env: awsEnv({ SFLOW_UPLOAD_REQUEST_TIMEOUT_S: '4', SFLOW_UPLOAD_ATTEMPTS: '1' }),
      });
      expect(r.code).toBe(1);
      const console = r.stdout + r.stderr;
      // b's upload was in flight when a failed: fail-fast let it finish (B2), b is COMPLETED
      expect(console).toMatch(/Fail-fast: .*\ba\b/);
      expect(console).not.toMatch(/⊘ b cancelled/);
      expect(console).toMatch(
        /✗ b: upload .*out\.txt → s3:\/\/sflow-results\/out\.txt failed: .*b stays COMPLETED/,
      );
      expect(console).toMatch(/✓ b completed/);
      const summary = readFileSync(join(runDirOf(out), 'sflow_summary.log'), 'utf8');
      expect(summary).toMatch(/^b +COMPLETED/m);
      expect(summary).toMatch(/^a +FAILED/m);
    });

    it('Ctrl-C stops an upload in flight at once: exit 130', async () => {
      const { file, out } = smallRecipe({ endpoint });
      const child = spawn(process.execPath, [BIN, 'run', '-f', file, '--output-dir', out], {
        env: { ...awsEnv({ SFLOW_UPLOAD_REQUEST_TIMEOUT_S: '600' }), NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
      try {
        const until = Date.now() + 20_000;
        for (;;) {
          const started =
            existsSync(out) &&
            readdirSync(out).some((d) => {
              const ev = join(out, d, 'events.jsonl');
              return existsSync(ev) && readFileSync(ev, 'utf8').includes('"phase":"start"');
            });
          if (started) break;
          if (Date.now() > until) throw new Error(`the upload never started: ${stderr}`);
          await new Promise((r) => setTimeout(r, 50));
        }
        child.kill('SIGINT');
        expect(await exited).toBe(130);
        // the task is cancelled with its upload: every message says so, none that it COMPLETED
        const failed = uploads(runDirOf(out), 'failed');
        expect(failed[0]).toMatchObject({
          cancelled: true,
          error: 'produce was cancelled (cancelled by SIGINT)',
        });
        expect(stderr).toMatch(
          /⊘ produce: upload .*out\.txt → s3:\/\/sflow-results\/out\.txt not uploaded: produce was cancelled/,
        );
        expect(stderr).not.toContain('stays COMPLETED');
        const summary = readFileSync(join(runDirOf(out), 'sflow_summary.log'), 'utf8');
        expect(summary).toMatch(/^produce +CANCELLED/m);
      } finally {
        child.kill('SIGKILL');
      }
    });

    it('the upload deadline stops endless retries', async () => {
      const { file, out } = smallRecipe({ endpoint, onError: 'fail' });
      const r = await sflowAsync(['run', '-f', file, '--output-dir', out], {
        env: awsEnv({
          SFLOW_UPLOAD_REQUEST_TIMEOUT_S: '0.3',
          SFLOW_UPLOAD_ATTEMPTS: '1000',
          SFLOW_UPLOAD_DEADLINE_S: '2',
        }),
      });
      expect(r.code).toBe(1);
      const failed = uploads(runDir(out), 'failed');
      expect(failed[0].error).toBe('the upload deadline passed (SFLOW_UPLOAD_DEADLINE_S=2)');
    });
  });
});

const runDir = runDirOf;

describe('settings', () => {
  it('a malformed SFLOW_UPLOAD_* value stops the run before it starts, without a stack trace', async () => {
    const { file, out } = smallRecipe({});
    const r = await sflowAsync(['run', '-f', file, '--output-dir', out], {
      env: awsEnv({ AWS_ENDPOINT_URL: s3.endpoint, SFLOW_UPLOAD_ATTEMPTS: 'lots' }),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("SFLOW_UPLOAD_ATTEMPTS must be a number ≥ 1, got 'lots'");
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(out)).toBe(false);
  });
});

describe('dry-run', () => {
  it('lists targets and uploads with resolved keys, contacts nothing, warns when no credential source exists', async () => {
    const { file, out } = smallRecipe({ endpoint: 'http://user:pw@127.0.0.1:9' });
    const env = awsEnv();
    delete env.AWS_ACCESS_KEY_ID;
    delete env.AWS_SECRET_ACCESS_KEY;
    const r = await sflowAsync(['run', '-f', file, '--output-dir', out, '--dry-run'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^ {2}results: s3 bucket=sflow-results endpoint=http:\/\/user:\*\*\*@127\.0\.0\.1:9\/ \(not contacted in dry-run\)$/m,
    );
    expect(r.stdout).toMatch(/upload: \S+\/produce\/out\.txt → results:out\.txt \(on_error=warn\)/);
    expect(r.stdout + r.stderr).toMatch(/no AWS credentials found/);
    expect(r.stdout).not.toContain(':pw@');
  });
});

describe('uploads.from and symbolic links a task made (issue 24 item 6)', () => {
  async function keys(prefix: string): Promise<string[]> {
    const r = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
    return (r.Contents ?? []).map((c) => c.Key ?? '').sort();
  }

  function recipe(tag: string, follow: boolean): string {
    return `version: "0.1"
storage:
  - name: results
    type: s3
    bucket: ${BUCKET}
    endpoint_url: ${s3.endpoint}
    region: us-east-1
    prefix: "links/${tag}/"
workflow:
  name: links
  tasks:
    - name: t
      script:
        - mkdir -p "$SFLOW_TASK_OUTPUT_DIR/out"
        - echo mine > "$SFLOW_TASK_OUTPUT_DIR/out/mine.txt"
        - ln -s /etc "$SFLOW_TASK_OUTPUT_DIR/out/sys"
        - ln -s /etc/hostname "$SFLOW_TASK_OUTPUT_DIR/out/hostname"
      uploads:
        - target: results
          from: "out/*"
          to: "flat/"${follow ? '\n          follow_symlinks: true' : ''}
        - target: results
          from: "out/*/host*"
          to: "deep/"${follow ? '\n          follow_symlinks: true' : ''}
`;
  }

  it('links out of the folder `from` names are skipped and reported; follow_symlinks: true uploads them', async () => {
    const plain = write(recipe('plain', false));
    const r = await sflowAsync(['run', '-f', plain.file, '--output-dir', plain.out], {
      env: awsEnv(),
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(0);
    // only the task's own file: neither /etc/hostname (a link) nor /etc/host* (through a linked folder)
    expect(await keys('links/plain/')).toEqual(['links/plain/flat/mine.txt']);
    expect(r.stderr).toContain('reached through a link out of');
    expect(r.stderr).toContain('follow_symlinks: true uploads them');
    expect(r.stderr).toMatch(/nothing to upload: no file matches out\/\*\/host\*/);

    const follow = write(recipe('follow', true));
    const f = await sflowAsync(['run', '-f', follow.file, '--output-dir', follow.out], {
      env: awsEnv(),
      timeoutMs: 120_000,
    });
    expect(f.code, f.stderr).toBe(0);
    const got = await keys('links/follow/');
    expect(got).toContain('links/follow/flat/mine.txt');
    expect(got).toContain('links/follow/flat/hostname');
    expect(got).toContain('links/follow/deep/hostname');
  }, 300_000);
});
