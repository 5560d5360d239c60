/**
 * Artifacts through the built CLI (artifacts-batch.md A2–A6): the preflight and
 * `--skip-artifact-check`, inline file:// content written into the run directory and exposed to
 * the task, the escape rule as a located error, hf:// and docker:// in the dry-run, and
 * an http:// artifact served by a server in this process: downloaded once, reused from the
 * cache by the next run, and a failing download reported without leaving a partial file.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasStackTrace } from '../helpers/cli.js';
import { sflowAsync } from '../helpers/cli-async.js';

let dir: string;
let n = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sflow-artifacts-run-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function workspace(yaml: string): { ws: string; file: string; out: string } {
  const ws = join(dir, `ws${n++}`);
  mkdirSync(ws);
  const file = join(ws, 'wf.yaml');
  writeFileSync(file, yaml);
  return { ws, file, out: join(ws, 'out') };
}

const run = (ws: string, args: string[]) =>
  sflowAsync(['run', '--workspace-dir', ws, '--output-dir', join(ws, 'out'), ...args], { cwd: ws });

function onlyRun(out: string): string {
  const runs = readdirSync(out).filter((d) => d !== '_dry_run');
  expect(runs).toHaveLength(1);
  return join(out, runs[0]);
}

const recipe = (artifacts: string, script: string[], variables = '') =>
  `version: "0.1"\n${variables}artifacts:\n${artifacts}\nworkflow:\n  name: art\n  tasks:\n    - name: t\n      script:\n${script.map((l) => `        - ${JSON.stringify(l)}`).join('\n')}\n`;

describe('fs:// preflight and --skip-artifact-check', () => {
  const yaml = recipe('  - name: SCRATCH\n    uri: fs:///nonexistent/sflow-scratch-dir', [
    'echo "scratch=$SCRATCH"',
  ]);

  it('a missing fs:// path fails the dry-run before anything, naming the artifact at file:line:col', async () => {
    const { ws, file } = workspace(yaml);
    const r = await run(ws, ['-f', file, '--dry-run']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}:4:`);
    expect(r.stderr).toContain(
      "Artifact 'SCRATCH' (fs://) path does not exist: /nonexistent/sflow-scratch-dir",
    );
    expect(r.stderr).toMatch(/hint: .*--skip-artifact-check/);
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it('with --skip-artifact-check it warns, runs, and never creates the path', async () => {
    const { ws, file, out } = workspace(yaml);
    const dry = await run(ws, ['-f', file, '--dry-run', '--skip-artifact-check']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout + dry.stderr).toMatch(
      /path does not exist: \/nonexistent\/sflow-scratch-dir \(--skip-artifact-check: left alone/,
    );
    const real = await run(ws, ['-f', file, '--skip-artifact-check']);
    expect(real.code, real.stderr).toBe(0);
    expect(real.stderr).toContain('--skip-artifact-check: left alone, not created');
    expect(existsSync('/nonexistent/sflow-scratch-dir')).toBe(false);
    expect(readFileSync(join(onlyRun(out), 't', 't.log'), 'utf8')).toBe(
      'scratch=/nonexistent/sflow-scratch-dir\n',
    );
  });

  it('--artifact NAME=URI points it at an existing directory', async () => {
    const { ws, file, out } = workspace(yaml);
    mkdirSync(join(ws, 'models'));
    const r = await run(ws, ['-f', file, '--artifact', 'SCRATCH=fs://models']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(onlyRun(out), 't', 't.log'), 'utf8')).toBe(`scratch=${join(ws, 'models')}\n`);
  });
});

describe('file:// with inline content', () => {
  const yaml = recipe(
    '  - name: INLINE\n    uri: file://artifacts/inline.txt\n    content: "x=${{ variables.A }}"',
    ['echo "env=$INLINE"', 'echo "expr=${{ artifacts.INLINE.path }}"', 'cat "$INLINE"'],
    'variables:\n  A: 42\n',
  );

  it('a real run writes R/artifacts/inline.txt with the resolved text; env and ${{ artifacts.X.path }} give its path', async () => {
    const { ws, file, out } = workspace(yaml);
    const r = await run(ws, ['-f', file]);
    expect(r.code, r.stderr).toBe(0);
    const R = onlyRun(out);
    const path = join(R, 'artifacts', 'inline.txt');
    expect(readFileSync(path, 'utf8')).toBe('x=42');
    expect(readFileSync(join(R, 't', 't.log'), 'utf8')).toBe(`env=${path}\nexpr=${path}\nx=42`);
  });

  it('the dry-run writes nothing', async () => {
    const { ws, file, out } = workspace(yaml);
    const r = await run(ws, ['-f', file, '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /INLINE: file:\/\/artifacts\/inline\.txt → .*\/_dry_run\/art\/artifacts\/inline\.txt \(inline content, written at run start\)/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it.each(['file://../x', 'file://../../x'])(
    '%s escapes the run directory: located error in the dry-run',
    async (uri) => {
      const { ws, file, out } = workspace(
        recipe(`  - name: INLINE\n    uri: ${uri}\n    content: "x"`, ['true']),
      );
      const r = await run(ws, ['-f', file, '--dry-run']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${file}:4:10`);
      expect(r.stderr).toContain(
        `Artifact 'INLINE': inline file '${uri.slice(7)}' escapes the run directory`,
      );
      expect(hasStackTrace(r.stderr)).toBe(false);
      expect(existsSync(out)).toBe(false);
    },
  );
});

describe('hf:// and docker://', () => {
  const yaml = recipe(
    '  - name: MODEL\n    uri: hf://org/tiny-model\n  - name: IMG\n    uri: docker://nvcr.io/x:1',
    ['echo $MODEL'],
  );

  it('the dry-run shows where each lands and what a real run does with it', async () => {
    const { ws, file } = workspace(yaml);
    const r = await run(ws, ['-f', file, '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /MODEL: hf:\/\/org\/tiny-model → \S+\/\.sflow_cache\/artifacts\/hf_[0-9a-f]{16} \(downloaded from the Hugging Face Hub at run start/,
    );
    expect(r.stdout).toContain(
      'IMG: docker://nvcr.io/x:1 → nvcr.io/x:1 (image made present at run start on every Docker engine a task runs on)',
    );
  });

  it('docker:// on a run without containers is passed on as the image reference, with a note', async () => {
    const { ws, file, out } = workspace(
      recipe('  - name: IMG\n    uri: docker://nvcr.io/x:1', ['echo "img=$IMG ${{ artifacts.IMG.path }}"']),
    );
    const r = await run(ws, ['-f', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      "ℹ artifact 'IMG': no task of this run starts containers on a Docker engine, so nvcr.io/x:1 is only passed on",
    );
    expect(readFileSync(join(onlyRun(out), 't', 't.log'), 'utf8')).toBe('img=nvcr.io/x:1 nvcr.io/x:1\n');
  });
});

describe('http:// artifacts', () => {
  let server: Server;
  let base = '';
  const hits = new Map<string, number>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
      if (req.url!.startsWith('/weights.bin')) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.alloc(300_000, 7));
      } else if (req.url!.startsWith('/stall')) {
        // headers and a first chunk, then silence
        res.writeHead(200, { 'content-length': '1000000' });
        res.write(Buffer.alloc(1000, 1));
      } else if (req.url!.startsWith('/flaky')) {
        // the first answer is a 503, the second the file: one retry
        if (hits.get(req.url!) === 1) res.writeHead(503).end('busy');
        else res.writeHead(200).end('ok');
      } else res.writeHead(404).end('no');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });

  const env = { SFLOW_DOWNLOAD_RETRY_DELAY_S: '0.05' };

  it('is downloaded once into the cache and reused by the next run', async () => {
    const uri = `${base}/weights.bin?token=s3cr3t`;
    const { ws, file } = workspace(
      recipe(`  - name: W\n    uri: "${uri}"`, ['wc -c < "$W"', 'echo "${{ artifacts.W.path }}"']),
    );
    // a download killed earlier left a temporary file; its process is gone, so it is cleaned up
    const cacheDir = join(ws, '.sflow_cache', 'artifacts');
    mkdirSync(cacheDir, { recursive: true });
    const h = createHash('sha256').update(uri).digest('hex').slice(0, 16);
    const deadPid = spawnSync('true').pid;
    writeFileSync(join(cacheDir, `http_${h}.part-${deadPid}-0000`), 'partial');
    const first = await sflowAsync(
      ['run', '--workspace-dir', ws, '--output-dir', join(ws, 'out1'), '-f', file],
      { cwd: ws, env },
    );
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(
      /✓ artifact 'W': downloaded 300000 bytes to .*\.sflow_cache\/artifacts\/http_[0-9a-f]{16}/,
    );
    expect(first.stderr).toContain('token=***');
    expect(first.stdout + first.stderr).not.toContain('s3cr3t');
    const second = await sflowAsync(
      ['run', '--workspace-dir', ws, '--output-dir', join(ws, 'out2'), '-f', file],
      { cwd: ws, env },
    );
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/✓ artifact 'W': using the cached copy/);
    expect(hits.get('/weights.bin?token=s3cr3t')).toBe(1);
    const cache = join(ws, '.sflow_cache', 'artifacts');
    const files = readdirSync(cache);
    expect(files).toHaveLength(1); // no .part leftovers
    for (const out of ['out1', 'out2']) {
      const log = readFileSync(join(onlyRun(join(ws, out)), 't', 't.log'), 'utf8');
      expect(log).toBe(`300000\n${join(cache, files[0])}\n`);
    }
  });

  it('a 503 is retried; a 404 stops the run naming the artifact, with no partial cache file and no run dir', async () => {
    const ok = workspace(recipe(`  - name: F\n    uri: ${base}/flaky`, ['cat "$F"']));
    const r1 = await sflowAsync(['run', '--workspace-dir', ok.ws, '--output-dir', ok.out, '-f', ok.file], {
      cwd: ok.ws,
      env,
    });
    expect(r1.code, r1.stderr).toBe(0);
    expect(r1.stderr).toMatch(
      /↻ artifact 'F': HTTP 503 Service Unavailable; retrying in 0\.05s \(attempt 2\/3\)/,
    );

    const bad = workspace(recipe(`  - name: BAD\n    uri: ${base}/missing`, ['true']));
    const r2 = await sflowAsync(['run', '--workspace-dir', bad.ws, '--output-dir', bad.out, '-f', bad.file], {
      cwd: bad.ws,
      env,
    });
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain(`Artifact 'BAD': download of ${base}/missing failed: HTTP 404 Not Found`);
    expect(hasStackTrace(r2.stderr)).toBe(false);
    expect(hits.get('/missing')).toBe(1); // a 404 is not retried
    expect(readdirSync(join(bad.ws, '.sflow_cache', 'artifacts'))).toEqual([]);
    expect(existsSync(bad.out)).toBe(false);
  });

  it('a server that stops sending is given up on after the idle limit, leaving nothing behind', async () => {
    const { ws, file, out } = workspace(recipe(`  - name: S\n    uri: ${base}/stall`, ['true']));
    const r = await sflowAsync(['run', '--workspace-dir', ws, '--output-dir', out, '-f', file], {
      cwd: ws,
      env: { ...env, SFLOW_DOWNLOAD_IDLE_TIMEOUT_S: '0.3', SFLOW_DOWNLOAD_ATTEMPTS: '2' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Artifact 'S': download of ${base}/stall failed: no data for 0.3s`);
    expect(hits.get('/stall')).toBe(2);
    expect(readdirSync(join(ws, '.sflow_cache', 'artifacts'))).toEqual([]);
  });

  it('the dry-run shows the deterministic cache path and downloads nothing', async () => {
    const { ws, file } = workspace(recipe(`  - name: W\n    uri: ${base}/weights.bin?dry=1`, ['true']));
    const r = await run(ws, ['-f', file, '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /W: http:\/\/127\.0\.0\.1:\d+\/weights\.bin\?dry=\*\*\* → .*\/\.sflow_cache\/artifacts\/http_[0-9a-f]{16} \(downloaded at run start/,
    );
    expect(hits.get('/weights.bin?dry=1')).toBeUndefined();
  });
});
