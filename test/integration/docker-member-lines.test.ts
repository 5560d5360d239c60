/**
 * The members of a multi-node Docker task (backends.md §3.4), without an engine: `memberCommand`
 * gives each node its own container, endpoint and node index; `spawnLabelled` (the attached
 * client of one member) lands every line of its stdout and stderr in the shared task log with the
 * member's `[<node> #<rank>] ` label, whole lines only, an unterminated last line ended, and its
 * exit counted once every line is in the log. Real `sh` processes stand in for `docker run`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memberLabel, spawnLabelled } from '../../src/backends/docker/labelled-client.js';
import { memberCommand } from '../../src/backends/docker/member-command.js';
import { launchSpecs, OPERATORS } from '../../src/operators/index.js';
import type { PlannedTask } from '../../src/plan/types.js';
import { scratchDir } from '../helpers/scratch.js';

const dir = scratchDir('sflow-member-lines-');
let n = 0;
const freshLog = (): string => {
  const p = join(dir, `t${++n}.log`);
  writeFileSync(p, '');
  return p;
};

const nodes = [
  { name: 'a', ip: '10.0.0.1', index: 0 },
  { name: 'b', ip: '10.0.0.2', index: 1 },
];

describe('multi-node Docker members', () => {
  it('one container per node: its endpoint, its name, its node index; the label names node and rank', () => {
    const env = {
      SFLOW_TASK_NODE_INDEX: '0',
      SFLOW_TASK_NUM_NODES: '2',
      SFLOW_LEADER_ADDRESS: '10.0.0.1',
    };
    const specs = launchSpecs(OPERATORS.docker_run, {
      task: 'span',
      type: 'docker_run',
      config: {},
      script: 'echo hi',
      nodes,
      gpus: null,
      env,
      allocationId: '0',
      backendConfig: {
        type: 'docker',
        image: 'img:1',
        hosts: [
          { name: 'a', address: 'host-a' },
          { name: 'b', address: 'host-b', user: 'ops' },
        ],
      },
    });
    expect(specs.map(memberLabel)).toEqual(['[a #0] ', '[b #1] ']);
    const task = { name: 'span', gpus: null } as unknown as PlannedTask;
    const got = specs.map((spec) =>
      memberCommand({
        task,
        spec,
        config: { name: 'd', type: 'docker' },
        hosts: [],
        program: 'docker',
        got: null,
        baseEnv: { BASE: '1' },
        engineEnv: { DOCKER_CONFIG: '/cfg', HOME: '/home/x' },
      }),
    );
    expect(got.map((g) => g.argv.slice(0, 3))).toEqual([
      ['docker', '-H', 'ssh://host-a'],
      ['docker', '-H', 'ssh://ops@host-b'],
    ]);
    expect(got.map((g) => g.container.name.replace(/^sflow-p\d+-/, ''))).toEqual(['span-a', 'span-b']);
    expect(got.map((g) => g.env.SFLOW_TASK_NODE_INDEX)).toEqual(['0', '1']);
    for (const g of got) {
      // the client's environment: the values `-e KEY` forwards, the engine settings, not the rest
      expect(g.env).toMatchObject({ BASE: '1', DOCKER_CONFIG: '/cfg', SFLOW_TASK_NUM_NODES: '2' });
      expect(g.env.SFLOW_LEADER_ADDRESS).toBe('10.0.0.1');
      expect(g.env.HOME).toBeUndefined();
      expect(g.argv).toContain('SFLOW_TASK_NODE_INDEX'); // forwarded by name
    }
  });

  it('every line of stdout and stderr is labelled; a last line without a newline is ended', async () => {
    const logPath = freshLog();
    const c = await spawnLabelled({
      argv: ['sh', '-c', 'printf "one\\ntw"; printf "o\\n"; echo err >&2; printf "tail"'],
      cwd: dir,
      env: process.env,
      logPath,
      label: '[b #1] ',
    });
    expect(await c.exited).toEqual({ code: 0, signal: null });
    expect(c.exitInfo()).toEqual({ code: 0, signal: null });
    const lines = readFileSync(logPath, 'utf8').split('\n');
    expect(lines.pop()).toBe(''); // the log ends with a newline
    expect(lines.filter((l) => !l.startsWith('[b #1] '))).toEqual([]);
    expect(lines.filter((l) => l !== '[b #1] err')).toEqual(['[b #1] one', '[b #1] two', '[b #1] tail']);
    expect(lines).toContain('[b #1] err');
  });

  it('two members writing at once into one log never split each other’s lines; the exit code is kept', async () => {
    const logPath = freshLog();
    const script = (tag: string, code: number) =>
      `i=0; while [ $i -lt 400 ]; do echo "${tag}-$i-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"; i=$((i+1)); done; exit ${code}`;
    const [a, b] = await Promise.all([
      spawnLabelled({
        argv: ['sh', '-c', script('A', 0)],
        cwd: dir,
        env: process.env,
        logPath,
        label: '[a #0] ',
      }),
      spawnLabelled({
        argv: ['sh', '-c', script('B', 3)],
        cwd: dir,
        env: process.env,
        logPath,
        label: '[b #1] ',
      }),
    ]);
    expect(await a.exited).toEqual({ code: 0, signal: null });
    expect(await b.exited).toEqual({ code: 3, signal: null });
    const lines = readFileSync(logPath, 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(800);
    const bad = lines.filter((l) => !/^\[(a #0|b #1)\] ([AB])-\d+-x{48}$/.test(l));
    expect(bad).toEqual([]);
    // each line carries its own member's label, in the order the member wrote them
    for (const [label, tag] of [
      ['[a #0] ', 'A'],
      ['[b #1] ', 'B'],
    ] as const) {
      const mine = lines.filter((l) => l.startsWith(label));
      expect(mine).toEqual(Array.from({ length: 400 }, (_, i) => `${label}${tag}-${i}-${'x'.repeat(48)}`));
    }
  });

  it('a client that cannot start is an error naming the program, and nothing is written', async () => {
    const logPath = freshLog();
    await expect(
      spawnLabelled({
        argv: [join(dir, 'no-such-docker')],
        cwd: dir,
        env: process.env,
        logPath,
        label: '[a #0] ',
      }),
    ).rejects.toThrow(/cannot start '.*no-such-docker'/);
    expect(readFileSync(logPath, 'utf8')).toBe('');
  });

  it('killGroupNow ends the client and what it started; the exit is a signal', async () => {
    const logPath = freshLog();
    const c = await spawnLabelled({
      argv: ['sh', '-c', 'echo up; sleep 300 & wait'],
      cwd: dir,
      env: process.env,
      logPath,
      label: '[a #0] ',
    });
    for (let i = 0; i < 200 && !readFileSync(logPath, 'utf8').includes('up'); i++)
      await new Promise((r) => setTimeout(r, 25));
    c.killGroupNow();
    expect(await c.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(readFileSync(logPath, 'utf8')).toBe('[a #0] up\n');
  });
});
