/**
 * hf:// and huggingface:// artifacts through the built CLI, against a stand-in Hub in this process
 * (test/fixtures/hf-hub/server.ts: the Hub's listing and resolve paths, LFS files redirected to a
 * second origin). A whole repo and single files land in the workspace's cache and reach the task;
 * HF_TOKEN goes to the Hub only (never to the redirect's host, never printed); the next run asks
 * only for the listing and downloads nothing; a new commit on the branch fetches only the changed
 * file; a pinned commit and HF_HUB_OFFLINE ask the Hub nothing; an unreachable Hub falls back to
 * the cache with a warning; private and gated repos without a token, an unknown revision and a
 * missing file stop the run before anything is allocated, with the reason; a 503 is retried.
 */
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
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasStackTrace } from '../helpers/cli.js';
import { sflowAsync } from '../helpers/cli-async.js';
import { startHubStandIn, type HubStandIn } from '../fixtures/hf-hub/server.js';

let dir: string;
let hub: HubStandIn;
let commit1 = '';
let n = 0;
const WEIGHTS = Buffer.alloc(200_000, 3);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sflow-hf-'));
  hub = await startHubStandIn();
  commit1 = hub.repo('org/tiny', {
    'config.json': '{"layers": 2}\n',
    'model.safetensors': { content: WEIGHTS, lfs: true },
    'tokenizer/vocab.txt': 'a\nb\n',
  });
  hub.repo('org/secret', { 'config.json': '{"private": true}\n' }, { private: true });
  hub.repo('org/gated', { 'config.json': '{}\n' }, { gated: true });
  hub.repo('org/data', { 'train.csv': 'x,y\n1,2\n' }, { type: 'dataset' });
});
afterAll(async () => {
  await hub?.close();
  rmSync(dir, { recursive: true, force: true });
});

function workspace(): string {
  const ws = join(dir, `ws${n++}`);
  mkdirSync(ws);
  return ws;
}

const recipe = (ws: string, uri: string, script: string[]) => {
  const f = join(ws, `wf${n++}.yaml`);
  writeFileSync(
    f,
    `version: "0.1"\nartifacts:\n  - name: M\n    uri: ${JSON.stringify(uri)}\nworkflow:\n  name: hf\n  tasks:\n    - name: t\n      script:\n${script.map((l) => `        - ${JSON.stringify(l)}`).join('\n')}\n`,
  );
  return f;
};

const baseEnv = () => ({
  HF_ENDPOINT: hub.url,
  HF_TOKEN: hub.token,
  HF_TOKEN_PATH: join(dir, 'no-token-file'),
  HF_HUB_OFFLINE: '',
  SFLOW_DOWNLOAD_RETRY_DELAY_S: '0.05',
});

let outs = 0;
async function run(ws: string, file: string, env: Record<string, string> = {}) {
  const out = join(ws, `out${outs++}`);
  const r = await sflowAsync(['run', '--workspace-dir', ws, '--output-dir', out, '-f', file], {
    cwd: ws,
    env: { ...baseEnv(), ...env },
    timeoutMs: 60_000,
  });
  const runs = existsSync(out) ? readdirSync(out) : [];
  const log = runs.length === 1 ? readFileSync(join(out, runs[0], 't', 't.log'), 'utf8') : '';
  return { ...r, out, log };
}

/** hub requests made while `f` ran */
async function asked<T>(f: () => Promise<T>): Promise<[T, string[]]> {
  const before = hub.requests.length;
  const r = await f();
  return [r, hub.requests.slice(before).map((q) => `${q.server} ${q.path}${q.auth ? ' +auth' : ''}`)];
}

function filesUnder(d: string): string[] {
  return readdirSync(d).flatMap((x) =>
    statSync(join(d, x)).isDirectory() ? filesUnder(join(d, x)) : [join(d, x)],
  );
}

describe('hf:// artifacts from a stand-in Hub', () => {
  it('a whole repo: listed, files fetched (LFS through the redirect without the token), reused next run', async () => {
    const ws = workspace();
    const f = recipe(ws, 'hf://org/tiny', [
      'cat "$M/config.json"',
      'wc -c < "$M/model.safetensors"',
      'cat "$M/tokenizer/vocab.txt"',
    ]);
    const dry = await sflowAsync(['run', '--dry-run', '--workspace-dir', ws, '-f', f], {
      cwd: ws,
      env: baseEnv(),
    });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(
      /M: hf:\/\/org\/tiny → \S+\/\.sflow_cache\/artifacts\/hf_[0-9a-f]{16} \(downloaded from the Hugging Face Hub/,
    );

    const [first, q1] = await asked(() => run(ws, f));
    expect(first.code, first.stderr).toBe(0);
    expect(first.log).toBe('{"layers": 2}\n200000\na\nb\n');
    expect(q1).toEqual(
      expect.arrayContaining([
        'hub /api/models/org/tiny/revision/main?blobs=true +auth',
        `hub /org/tiny/resolve/${commit1}/config.json +auth`,
        `hub /org/tiny/resolve/${commit1}/model.safetensors +auth`,
        expect.stringMatching(/^cdn \/[0-9a-f]{64}$/), // no +auth: the token stayed with the Hub
      ]),
    );
    expect(q1.filter((q) => q.startsWith('cdn') && q.endsWith('+auth'))).toEqual([]);
    expect(first.stderr).toMatch(
      new RegExp(`✓ artifact 'M': commit ${commit1.slice(0, 12)}, 3 file\\(s\\) downloaded`),
    );
    // the token is in no printed line and no file of the run or the cache
    expect(first.stdout + first.stderr).not.toContain(hub.token);
    for (const file of [...filesUnder(first.out), ...filesUnder(join(ws, '.sflow_cache'))])
      expect(readFileSync(file, 'latin1'), file).not.toContain(hub.token);

    const [second, q2] = await asked(() => run(ws, f));
    expect(second.code, second.stderr).toBe(0);
    expect(second.log).toBe(first.log);
    expect(q2).toEqual(['hub /api/models/org/tiny/revision/main?blobs=true +auth']);
    expect(second.stderr).toContain("✓ artifact 'M': commit");
    expect(second.stderr).toContain('using the 3 cached file(s)');

    // a new commit on main that changes one file: only that file is fetched
    const commit2 = hub.push('org/tiny', {
      'config.json': '{"layers": 3}\n',
      'model.safetensors': { content: WEIGHTS, lfs: true },
      'tokenizer/vocab.txt': 'a\nb\n',
    });
    const [third, q3] = await asked(() => run(ws, f));
    expect(third.code, third.stderr).toBe(0);
    expect(third.log).toBe('{"layers": 3}\n200000\na\nb\n');
    expect(q3).toEqual([
      'hub /api/models/org/tiny/revision/main?blobs=true +auth',
      `hub /org/tiny/resolve/${commit2}/config.json +auth`,
    ]);
    // nothing but the files and the record in the folder (no temporary leftovers)
    const cache = readdirSync(join(ws, '.sflow_cache', 'artifacts'));
    expect(cache).toHaveLength(1);
    expect(readdirSync(join(ws, '.sflow_cache', 'artifacts', cache[0])).sort()).toEqual([
      '.sflow-hf.json',
      'config.json',
      'model.safetensors',
      'tokenizer',
    ]);
  });

  it('single files and folders, datasets, huggingface://; a pinned commit and HF_HUB_OFFLINE ask nothing', async () => {
    const ws = workspace();
    const one = recipe(ws, `huggingface://org/tiny@${commit1}/tokenizer`, [
      'cat "$M/vocab.txt"',
      'echo "$M"',
    ]);
    const r = await run(ws, one);
    expect(r.code, r.stderr).toBe(0);
    expect(r.log).toMatch(/^a\nb\n\S+\/hf_[0-9a-f]{16}\/tokenizer\n$/);
    const [again, q] = await asked(() => run(ws, one));
    expect(again.code, again.stderr).toBe(0);
    expect(q).toEqual([]); // a commit does not move: the cache answers alone
    expect(again.stderr).toContain('(the Hub was not asked)');

    const ds = recipe(ws, 'hf://datasets/org/data/train.csv', ['cat "$M"']);
    const d = await run(ws, ds);
    expect(d.code, d.stderr).toBe(0);
    expect(d.log).toBe('x,y\n1,2\n');
    const [offline, q2] = await asked(() => run(ws, ds, { HF_HUB_OFFLINE: '1' }));
    expect(offline.code, offline.stderr).toBe(0);
    expect(q2).toEqual([]);
    const missing = await run(ws, recipe(ws, 'hf://org/tiny/config.json', ['cat "$M"']), {
      HF_HUB_OFFLINE: '1',
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      'HF_HUB_OFFLINE is set and org/tiny@main/config.json is not complete in the cache',
    );
  });

  it('an unreachable Hub: the cached files are used with a warning; nothing cached is an error', async () => {
    const ws = workspace();
    const f = recipe(ws, 'hf://org/tiny/config.json', ['cat "$M"']);
    expect((await run(ws, f)).code).toBe(0);
    const gone = { HF_ENDPOINT: 'http://127.0.0.1:9', SFLOW_DOWNLOAD_ATTEMPTS: '1' };
    const r = await run(ws, f, gone);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /⚠ org\/tiny@main: the Hub could not be reached \(.*\); using the cached files of commit/,
    );
    const fresh = await run(workspace(), recipe(ws, 'hf://org/tiny/config.json', ['cat "$M"']), gone);
    expect(fresh.code).toBe(1);
    expect(fresh.stderr).toContain("Artifact 'M': cannot list org/tiny@main at http://127.0.0.1:9");
  });

  it.each([
    [
      'hf://org/secret',
      { HF_TOKEN: '' },
      'org/secret@main was not found or is private (no HF_TOKEN was sent)',
    ],
    [
      'hf://org/gated',
      { HF_TOKEN: '' },
      'org/gated@main is gated: accept its conditions on the Hub and set HF_TOKEN',
    ],
    [
      'hf://org/secret',
      { HF_TOKEN: 'hf_wrong' },
      'was not found or is private (the token was refused or has no access)',
    ],
    ['hf://org/tiny@nope', {}, "revision 'nope' does not exist in org/tiny"],
    ['hf://org/tiny/missing.bin', {}, "has no file or folder 'missing.bin'"],
  ])('%s %j: the run stops before anything is allocated: %s', async (uri, env, says) => {
    const ws = workspace();
    const r = await run(ws, recipe(ws, uri, ['echo never']), env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Artifact 'M': `);
    expect(r.stderr).toContain(says);
    expect(hasStackTrace(r.stderr)).toBe(false);
    expect(existsSync(r.out)).toBe(false);
  });

  it('the token file (HF_TOKEN_PATH) is read when HF_TOKEN is unset; a 503 is retried', async () => {
    const ws = workspace();
    const tokenFile = join(ws, 'token');
    writeFileSync(tokenFile, `${hub.token}\n`);
    hub.failNext(1);
    const r = await run(ws, recipe(ws, 'hf://org/secret/config.json', ['cat "$M"']), {
      HF_TOKEN: '',
      HF_TOKEN_PATH: tokenFile,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.log).toBe('{"private": true}\n');
  });

  it('a malformed hf:// URI is a located plan error in the dry-run', async () => {
    const ws = workspace();
    const f = recipe(ws, 'hf://just-a-name', ['echo']);
    const r = await sflowAsync(['run', '--dry-run', '--workspace-dir', ws, '-f', f], {
      cwd: ws,
      env: baseEnv(),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /wf\d+\.yaml:4:\d+: Artifact 'M': 'hf:\/\/just-a-name' does not name a repository/,
    );
  });
});
