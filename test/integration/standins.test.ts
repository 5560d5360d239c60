/**
 * The stand-ins the samples run with (test/fixtures/standins), on this machine as real processes
 * on free ports: an OpenAI server in vLLM's shape (models, completions, chat, streaming, health,
 * metrics, a wrong model refused), Dynamo's frontend routing to workers that registered through
 * the etcd stand-in and announced themselves on the NATS stand-in (disaggregated: the decode
 * worker fetches the KV cache from the prefill worker; a stopped worker deregisters), AIPerf's
 * table and exports with what it measured, mpirun's ranks, and python3 handing other work to the
 * real interpreter. Each process is stopped and leaves no state folder.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freePorts, required, standinEnv, standinsMissing } from '../helpers/standins.js';

const missing = standinsMissing();
if (missing && required) throw new Error(`SFLOW_REQUIRE_ENGINES=1 but ${missing}`);

const state = mkdtempSync(join(tmpdir(), 'sflow-standins-'));
const env = { ...standinEnv(), TMPDIR: state };
const procs: ChildProcess[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) {
    p.kill('SIGTERM');
    if (p.exitCode === null && p.signalCode === null) await new Promise((r) => p.once('close', r));
  }
});
afterAll(() => rmSync(state, { recursive: true, force: true }));

/** starts a stand-in; resolves with its output so far once `ready` shows in it */
async function start(cmd: string, args: string[], ready: RegExp, extra: Record<string, string> = {}) {
  const p = spawn(cmd, args, { env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(p);
  let out = '';
  p.stdout.on('data', (d) => (out += String(d)));
  p.stderr.on('data', (d) => (out += String(d)));
  const end = Date.now() + 20_000;
  while (!ready.test(out)) {
    if (p.exitCode !== null) throw new Error(`${cmd} exited ${p.exitCode}: ${out}`);
    if (Date.now() > end) throw new Error(`${cmd}: no ${ready} within 20 s: ${out}`);
    await sleep(50);
  }
  return { proc: p, output: () => out };
}

/** a response's JSON, as whatever shape the test then checks */
const json = async (r: Response | Promise<Response>): Promise<any> => (await r).json();

const post = (url: string, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

describe.skipIf(missing !== undefined)(`the stand-ins${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('vllm serve answers the OpenAI API for its model, refuses another, counts in /metrics', async () => {
    const [port] = await freePorts(1);
    const s = await start(
      'vllm',
      ['serve', '/m/Q', '--served-model-name', 'Q', '--port', String(port)],
      /startup complete/,
    );
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect(await json(fetch(`${base}/v1/models`))).toMatchObject({ data: [{ id: 'Q' }] });
    const chat = await json(
      post(`${base}/v1/chat/completions`, {
        model: 'Q',
        messages: [{ role: 'user', content: 'a b c' }],
        max_tokens: 5,
      }),
    );
    expect(chat.choices[0].message.content.split(' ')).toHaveLength(5);
    expect(chat.usage).toEqual({ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 });
    const text = await json(post(`${base}/v1/completions`, { model: '/m/Q', prompt: 'x', max_tokens: 2 }));
    expect(text.object).toBe('text_completion');
    const stream = await (
      await post(`${base}/v1/chat/completions`, { model: 'Q', messages: [], max_tokens: 3, stream: true })
    ).text();
    expect(stream.match(/"delta"/g)).toHaveLength(3);
    expect(stream.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const wrong = await post(`${base}/v1/chat/completions`, { model: 'other', messages: [] });
    expect(wrong.status).toBe(404);
    expect(await (await fetch(`${base}/metrics`)).text()).toContain(
      'vllm:request_success_total{model_name="Q"} 3',
    );
    // the port is taken: a second server fails as the real one does
    const again = spawnSync('vllm', ['serve', 'Q', '--port', String(port)], {
      env,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('address already in use');
    expect(s.output()).toContain(`serving 'Q' on port ${port}`);
  });

  it('Dynamo: workers register through etcd and NATS, the frontend routes disaggregated requests, a stopped worker deregisters', async () => {
    const [http, etcd, nats, pre, dec] = await freePorts(5);
    const e = await start(
      'etcd',
      ['--listen-client-urls', `http://0.0.0.0:${etcd}`, '--data-dir', '/tmp/unused'],
      /ready to serve/,
    );
    const n = await start('nats-server', ['-js', '-p', String(nats)], /Server is ready/);
    const infra = { ETCD_ENDPOINTS: `127.0.0.1:${etcd}`, NATS_SERVER: `nats://127.0.0.1:${nats}` };
    await start(
      'python3',
      ['-m', 'dynamo.frontend', '--http-port', String(http)],
      /Starting HTTP service/,
      infra,
    );
    const base = `http://127.0.0.1:${http}`;
    expect((await fetch(`${base}/health`)).status).toBe(503); // no worker yet
    expect((await post(`${base}/v1/chat/completions`, { model: 'Q', messages: [] })).status).toBe(404);
    const worker = (mode: string, port: number) =>
      start(
        'python3',
        [
          '-m',
          'dynamo.sglang',
          '--model-path',
          '/m/Q',
          '--served-model-name',
          'Q',
          '--disaggregation-mode',
          mode,
          '--skip-tokenizer-init',
        ],
        /Model registration succeeded/,
        { ...infra, DYN_SYSTEM_PORT: String(port) },
      );
    const p = await worker('prefill', pre);
    await worker('decode', dec);
    expect(n.output()).toMatch(/message on 'dynamo\.register\.sglang\.prefill'/);
    expect(n.output()).toMatch(/message on 'dynamo\.register\.sglang\.decode'/);
    const health = await json(fetch(`${base}/health`));
    expect(health.instances.map((i: { mode: string }) => i.mode).sort()).toEqual(['decode', 'prefill']);
    expect(await json(fetch(`${base}/v1/models`))).toMatchObject({ data: [{ id: 'Q' }] });
    for (let i = 0; i < 2; i++) {
      const r = await post(`${base}/v1/chat/completions`, {
        model: 'Q',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 4,
      });
      expect(r.status).toBe(200);
    }
    const metrics = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(await metrics(pre)).toContain('standin_prefill_total{model="Q"} 2');
    expect(await metrics(dec)).toContain('standin_kv_transfers_total{model="Q"} 2');
    expect(await json(fetch(`http://127.0.0.1:${dec}/health`))).toMatchObject({
      status: 'ready',
      mode: 'decode',
    });
    // the prefill worker stops: it leaves etcd, and decode then serves alone
    p.proc.kill('SIGTERM');
    await new Promise((r) => p.proc.once('close', r));
    const left = await json(fetch(`${base}/health`));
    expect(left.instances.map((i: { mode: string }) => i.mode)).toEqual(['decode']);
    expect(
      (await post(`${base}/v1/chat/completions`, { model: 'Q', messages: [], max_tokens: 1 })).status,
    ).toBe(200);
    expect(e.output()).toContain('serving client traffic');
  });

  it('a worker without reachable etcd/NATS fails with the reason; a missing --extra-engine-args file fails', () => {
    const noInfra = spawnSync('python3', ['-m', 'dynamo.vllm', '--model', 'Q'], {
      env: { ...env, NATS_SERVER: 'nats://127.0.0.1:1', STANDIN_CONNECT_TIMEOUT: '1' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(noInfra.status).toBe(1);
    expect(noInfra.stderr).toContain('cannot connect to NATS at nats://127.0.0.1:1');
    const noFile = spawnSync(
      'python3',
      ['-m', 'dynamo.trtllm', '--model-path', 'Q', '--extra-engine-args', '/nonexistent.yaml'],
      {
        env,
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    expect(noFile.status).toBe(1);
    expect(noFile.stderr).toContain("No such file or directory: '/nonexistent.yaml'");
  });

  it('aiperf profile measures the requests and writes the console table, CSV and JSON exports', async () => {
    const [port] = await freePorts(1);
    await start(
      'python3',
      ['-m', 'sglang.launch_server', '--model-path', 'Q', '--port', String(port)],
      /fired up/,
    );
    const art = join(state, 'aiperf');
    const r = spawnSync(
      'aiperf',
      ['profile', '--model', 'Q', '--url', `127.0.0.1:${port}`, '--endpoint-type', 'chat', '--streaming',
        '--synthetic-input-tokens-mean', '7', '--output-tokens-mean', '5', '--concurrency', '3',
        '--request-count', '6', '--warmup-request-count', '2', '--artifact-dir', art, '-H', 'Authorization: Bearer x'],
      { env, encoding: 'utf8', timeout: 60_000 },
    ); // prettier-ignore
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('NVIDIA AIPerf | LLM Metrics');
    const csv = readFileSync(join(art, 'profile_export_aiperf.csv'), 'utf8');
    expect(csv).toMatch(/^Request Count \(requests\),6$/m);
    expect(csv).toMatch(/^Error Request Count \(requests\),0$/m);
    expect(csv).toMatch(/^Output Sequence Length \(tokens\),5\.00,5\.00,5\.00/m);
    expect(csv).toMatch(/^Input Sequence Length \(tokens\),7\.00/m);
    const json = JSON.parse(readFileSync(join(art, 'profile_export_aiperf.json'), 'utf8'));
    expect(json.request_count.avg).toBe(6);
    expect(json.output_token_throughput.avg).toBeGreaterThan(0);
    expect(json.request_latency.max).toBeGreaterThanOrEqual(json.request_latency.min);
    // nothing answers: every request is an error and the run fails
    const [dead] = await freePorts(1);
    const bad = spawnSync(
      'aiperf',
      [
        'profile',
        '-m',
        'Q',
        '--url',
        `127.0.0.1:${dead}`,
        '--request-count',
        '2',
        '--artifact-dir',
        join(state, 'bad'),
      ],
      {
        env,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('Errors: 2 of 2 requests failed');
  });

  it('mpirun starts -np ranks with their rank and size; trtllm-llmapi-launch runs the command on rank 0 only', () => {
    const r = spawnSync(
      'mpirun',
      ['-np', '3', '--allow-run-as-root', 'trtllm-llmapi-launch', 'sh', '-c', 'echo "served by $OMPI_COMM_WORLD_RANK/$OMPI_COMM_WORLD_SIZE"; sleep 1; kill -TERM $PPID'],
      { env, encoding: 'utf8', timeout: 20_000 },
    ); // prettier-ignore
    expect(r.stdout).toContain('served by 0/3');
    expect(r.stdout).toMatch(/rank 1 of 3: MPI worker of rank 0/);
    expect(r.stdout).toMatch(/rank 2 of 3: MPI worker of rank 0/);
    expect(r.stdout.match(/^served by/gm)).toHaveLength(1);
  });

  it('python3 hands anything but the server modules to the real interpreter; nbody prints its result lines', () => {
    const py = spawnSync('python3', ['-c', 'print(6 * 7)'], { env, encoding: 'utf8', timeout: 20_000 });
    if (py.status === 127) expect(py.stderr).toContain('no real python3 on PATH');
    else expect(py.stdout.trim()).toBe('42');
    const nb = spawnSync('nbody', ['-benchmark', '-numbodies=1000', '-i=5'], {
      env,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(nb.stdout).toMatch(/^1000 bodies, total time for 5 iterations: [0-9.]+ ms$/m);
    expect(nb.stdout).toMatch(/^= [0-9.]+ billion interactions per second$/m);
  });

  it('no stand-in leaves its state folder behind', async () => {
    const [port] = await freePorts(1);
    const s = await start('trtllm-serve', ['/m/Q', '--port', String(port)], /Uvicorn running/);
    expect(readdirSync(state).filter((d) => d.startsWith('sflow-standin.'))).toHaveLength(1);
    s.proc.kill('SIGTERM');
    await new Promise((r) => s.proc.once('close', r));
    const end = Date.now() + 5_000;
    while (readdirSync(state).some((d) => d.startsWith('sflow-standin.')) && Date.now() < end)
      await sleep(50);
    expect(
      readdirSync(state).filter((d) => d.startsWith('sflow-standin.') || d.startsWith('aiperf-')),
    ).toEqual([]);
    expect(existsSync(state)).toBe(true);
  });
});
