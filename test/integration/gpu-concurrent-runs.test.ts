/**
 * Two concurrent `sflow run` processes on one box (a fake 4-GPU nvidia-smi on PATH) get disjoint
 * GPUs, checked from the tasks' own CUDA_VISIBLE_DEVICES; after one driver is SIGKILLed, the other
 * run's next claim reaps the dead run's reservations and gets its GPUs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, REPO } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-gpu-runs-'));
const env = {
  ...process.env,
  PATH: `${join(REPO, 'assets', 'test-bin')}:${process.env.PATH}`,
  FAKE_NVIDIA_SMI_GPUS: '4',
  SFLOW_GPU_RESERVATION_DIR: join(dir, 'registry'),
  NO_COLOR: '1',
};
const children: ChildProcess[] = [];

function start(
  name: string,
  recipe: string,
): { proc: ChildProcess; out: () => string; done: Promise<number | null> } {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, recipe);
  const cwd = mkdtempSync(join(dir, `${name}-`));
  const proc = spawn(process.execPath, [BIN, 'run', '-f', file], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let text = '';
  proc.stdout.on('data', (d) => (text += String(d)));
  proc.stderr.on('data', (d) => (text += String(d)));
  const done = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return { proc, out: () => text, done };
}

async function until(what: string, cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A file a task writes with `echo … > file` exists (empty) before its content is written: it is
 * complete once its line ends with the newline echo writes in the same write.
 */
function complete(file: string): boolean {
  try {
    return readFileSync(file, 'utf8').endsWith('\n');
  } catch {
    return false;
  }
}

/** a process (pid) or a process group (-pgid) still exists */
function exists(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch {
    return false;
  }
}

/** run a's GPU record names its launcher (gpu/keeper.ts), which exits once a's tasks are gone */
function keeperOfAAlive(): boolean {
  const reg = env.SFLOW_GPU_RESERVATION_DIR;
  for (const name of readdirSync(reg)) {
    if (!name.startsWith('a-') || !name.endsWith('.json')) continue;
    const keeper = (JSON.parse(readFileSync(join(reg, name), 'utf8')) as { keeper?: { pid: number } }).keeper;
    if (keeper && exists(keeper.pid)) return true;
  }
  return false;
}

const gpusOf = (file: string): number[] => readFileSync(file, 'utf8').trim().split(',').map(Number);

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  // the SIGKILLed driver's task group has no driver left to stop it
  const pg = join(dir, 'a.pgid');
  if (existsSync(pg)) {
    try {
      process.kill(-Number(readFileSync(pg, 'utf8').trim()), 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('GPU reservation registry across concurrent sflow runs', () => {
  it('gives disjoint GPUs to two runs and reaps the records of a SIGKILLed one', async () => {
    const hold = (who: string, extra = ''): string => `version: "0.1"
workflow:
  name: ${who}
  tasks:${extra}
    - name: ${who}1
      resources:
        gpus: {count: 2}
      script:
        - 'echo "$CUDA_VISIBLE_DEVICES" > ${dir}/${who}1.gpus'
        - 'echo $$ > ${dir}/${who}.pgid'
        - 'while [ ! -e ${dir}/release ]; do sleep 0.05; done'
`;
    const a = start('a', hold('a'));
    const bRecipe = hold(
      'b',
      `
    - name: gate
      script: ['while [ ! -e ${dir}/go ]; do sleep 0.05; done']
    - name: b2
      depends_on: [gate]
      resources:
        gpus: {count: 2}
      script:
        - 'echo "$CUDA_VISIBLE_DEVICES" > ${dir}/b2.gpus'`,
    );
    const b = start('b', bRecipe);
    await until(
      'both runs to hold GPUs',
      () => complete(join(dir, 'a1.gpus')) && complete(join(dir, 'b1.gpus')),
    );
    const ga = gpusOf(join(dir, 'a1.gpus'));
    const gb = gpusOf(join(dir, 'b1.gpus'));
    expect(ga).toHaveLength(2);
    expect(gb).toHaveLength(2);
    expect(new Set([...ga, ...gb]).size).toBe(4);

    // the driver of run a dies without any cleanup (its process group id is known first, so
    // afterAll can stop the task should the lifeline fail)
    await until('run a’s task to write its process group', () => complete(join(dir, 'a.pgid')));
    a.proc.kill('SIGKILL');
    await a.done;
    // its launcher stops the task (lifeline); the record is kept until the launcher is gone too
    const pgid = Number(readFileSync(join(dir, 'a.pgid'), 'utf8').trim());
    await until('run a’s task and launcher to be gone', () => !exists(-pgid) && !keeperOfAAlive());
    writeFileSync(join(dir, 'go'), '');
    await until('b2 to start on the dead run’s GPUs', () => complete(join(dir, 'b2.gpus')), 30_000);
    expect(gpusOf(join(dir, 'b2.gpus')).sort()).toEqual([...ga].sort());
    expect(b.out()).toMatch(/reaped 1 GPU reservation/);
    writeFileSync(join(dir, 'release'), '');
    expect(await b.done).toBe(0);
  });
});
