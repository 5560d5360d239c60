/**
 * Secrets without `ps` (issue 24 item 7), with the built CLI: secret variables from the environment
 * (`SFLOW_SECRET_<NAME>`), a file (`--secret-file NAME=PATH`) and a prompt on a terminal (a pty),
 * for `run` and `batch` (`--resume`: resume-secrets.test.ts; `--ssh`: the ssh engine suite). While
 * the run's task waits, every process's command line on this machine is read: none holds a value.
 * The run folder and the console hold none either; `--dry-run` masks them; `-s` on a secret is
 * warned about; with no value and no terminal the run is refused naming the ways.
 */
import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { until } from '../conformance/procs.js';
import { BIN, hasStackTrace, sflow } from '../helpers/cli.js';
import { onlyRunDir } from '../helpers/run-dir.js';
import { scratchDir } from '../helpers/scratch.js';

const TOKEN = `tok-${process.pid}-3b9d7e1f-ps`;
const PASSWORD = `pw-${process.pid}-c40a9e22-ps`;

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

/** API_TOKEN and DB_PASSWORD have no value in the recipe: they must come from somewhere */
const RECIPE = `version: "0.1"
variables:
  API_TOKEN: { value: null }
  DB_PASSWORD: { value: null }
workflow:
  name: nops
  tasks:
    - name: use
      script:
        - 'echo "token $(printf %s "$API_TOKEN" | sha256sum | cut -c1-16)"'
        - 'echo "password $(printf %s "$DB_PASSWORD" | sha256sum | cut -c1-16)"'
        - 'while [ ! -e "$MARKS/go" ]; do sleep 0.1; done'
`;

/** the same on a Slurm backend, for sflow batch */
const BATCH_RECIPE = `${RECIPE}backends:
  - name: cluster
    type: slurm
    partition: p
    account: a
    time: '00:10:00'
    nodes: 1
`;

/** every file under dir whose bytes hold needle */
function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) hits.push(...filesContaining(p, needle));
    else if (readFileSync(p).includes(needle)) hits.push(p);
  }
  return hits;
}

/** pids of every process whose command line holds needle */
function commandLinesWith(needle: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`).includes(needle)) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function setup() {
  const dir = scratchDir('sflow-nops-');
  writeFileSync(join(dir, 'r.yaml'), RECIPE);
  writeFileSync(join(dir, 'b.yaml'), BATCH_RECIPE);
  const marks = join(dir, 'marks');
  spawnSync('mkdir', [marks]);
  const pwFile = join(dir, 'pw.txt');
  writeFileSync(pwFile, `${PASSWORD}\n`, { mode: 0o600 });
  return { dir, marks, pwFile };
}

describe('secret variables without a command line', () => {
  it('from SFLOW_SECRET_<NAME> and --secret-file: no command line, run folder or console line holds them', async () => {
    const { dir, marks, pwFile } = setup();
    const child = spawn(
      process.execPath,
      [BIN, 'run', '-f', 'r.yaml', '--secret-file', `DB_PASSWORD=${pwFile}`],
      {
        cwd: dir,
        env: {
          ...process.env,
          NO_COLOR: '1',
          MARKS: marks,
          SFLOW_SECRET_API_TOKEN: TOKEN,
          SFLOW_TASK_OUTPUT: 'always',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    const done = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    try {
      await until(() => out.includes('[use] password '), 60_000, `the task to start (${out})`);
      // the task and everything sflow started run now: nobody's command line has a value
      expect(commandLinesWith(TOKEN)).toEqual([]);
      expect(commandLinesWith(PASSWORD)).toEqual([]);
    } finally {
      writeFileSync(join(marks, 'go'), '');
    }
    expect(await done, out).toBe(0);
    const runDir = onlyRunDir(join(dir, 'sflow_output'));
    // the task got both values
    const log = readFileSync(join(runDir, 'use', 'use.log'), 'utf8');
    expect(log).toContain(`token ${hash(TOKEN)}`);
    expect(log).toContain(`password ${hash(PASSWORD)}`);
    for (const v of [TOKEN, PASSWORD]) {
      expect(filesContaining(runDir, v)).toEqual([]);
      expect(out).not.toContain(v);
    }
  }, 120_000);

  it('--dry-run masks secret values; -s on a secret is warned about', () => {
    const { dir, pwFile } = setup();
    const r = sflow(
      [
        'run',
        '-f',
        'r.yaml',
        '--dry-run',
        '-s',
        `API_TOKEN=${TOKEN}`,
        '--secret-file',
        `DB_PASSWORD=${pwFile}`,
      ],
      {
        cwd: dir,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(r.stdout).toContain('API_TOKEN = *** (secret)');
    expect(r.stdout).toContain('--set API_TOKEN=***');
    expect(r.stderr).toContain("-s API_TOKEN=… puts a secret on sflow's command line");
    expect(r.stderr).toContain('SFLOW_SECRET_API_TOKEN');
  });

  it('no value and no terminal: refused before anything runs, naming the ways', () => {
    const { dir } = setup();
    const r = sflow(['run', '-f', 'r.yaml'], { cwd: dir, env: { SFLOW_SECRET_API_TOKEN: TOKEN } });
    expect(r.code).toBe(1);
    expect(hasStackTrace(r.stderr)).toBe(false);
    expect(r.stderr).toContain('the secret variable(s) DB_PASSWORD have no value here');
    expect(r.stderr).toContain('export SFLOW_SECRET_DB_PASSWORD=…');
    expect(r.stderr).toContain('--secret-file DB_PASSWORD=PATH');
    expect(existsSync(join(dir, 'sflow_output'))).toBe(false);
    const bad = sflow(['run', '-f', 'r.yaml', '--secret-file', `NOPE=${join(dir, 'r.yaml')}`], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("secret 'NOPE' names no top-level variable of the recipe");
  });

  const python = spawnSync('python3', ['-c', 'import pty'], { stdio: 'ignore' }).status === 0;
  it.skipIf(!python)(
    'asked on a terminal: nothing echoed, the task gets the values',
    async () => {
      const { dir, marks } = setup();
      writeFileSync(join(marks, 'go'), '');
      // answers each prompt as it appears, then reads to the end; prints what the terminal showed
      writeFileSync(
        join(dir, 'answer.py'),
        `import os, pty, sys
answers = {b'API_TOKEN (secret': sys.argv[1].encode(), b'DB_PASSWORD (secret': sys.argv[2].encode()}
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[3], sys.argv[3:])
seen = b''
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
    for k in list(answers):
        if k in seen and seen.rstrip().endswith(b':'):
            os.write(fd, answers.pop(k) + b'\\r')
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(seen)
print('\\nexit', os.waitstatus_to_exitcode(status))
`,
      );
      const r = await new Promise<{ out: string }>((resolve) => {
        const c = spawn(
          'python3',
          ['answer.py', TOKEN, PASSWORD, process.execPath, BIN, 'run', '-f', 'r.yaml'],
          {
            cwd: dir,
            env: { ...process.env, NO_COLOR: '1', MARKS: marks },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let out = '';
        c.stdout.on('data', (d) => (out += String(d)));
        c.stderr.on('data', (d) => (out += String(d)));
        const timer = setTimeout(() => c.kill('SIGKILL'), 90_000);
        c.on('close', () => {
          clearTimeout(timer);
          resolve({ out });
        });
      });
      expect(r.out).toContain('API_TOKEN (secret, not echoed): ');
      expect(r.out).toContain('DB_PASSWORD (secret, not echoed): ');
      expect(r.out.trim().split('\n').at(-1)).toBe('exit 0');
      expect(r.out).not.toContain(TOKEN);
      expect(r.out).not.toContain(PASSWORD);
      const runDir = onlyRunDir(join(dir, 'sflow_output'));
      const log = readFileSync(join(runDir, 'use', 'use.log'), 'utf8');
      expect(log).toContain(`token ${hash(TOKEN)}`);
      expect(log).toContain(`password ${hash(PASSWORD)}`);
      for (const v of [TOKEN, PASSWORD]) expect(filesContaining(runDir, v)).toEqual([]);
    },
    120_000,
  );

  it('sflow batch: a secret file is forwarded by path, the script and its recipe copy hold no value', () => {
    const { dir, pwFile } = setup();
    const r = sflow(
      [
        'batch',
        '-p',
        'gpu',
        '-A',
        'proj',
        '-N',
        '1',
        '-f',
        'b.yaml',
        '--secret-file',
        `DB_PASSWORD=${pwFile}`,
        '-o',
        'job.sh',
      ],
      { cwd: dir, env: { PATH: '/usr/bin:/bin', SFLOW_SECRET_API_TOKEN: TOKEN } },
    );
    expect(r.code, r.stderr).toBe(0);
    const script = readFileSync(join(dir, 'job.sh'), 'utf8');
    expect(script).toContain(`--secret-file DB_PASSWORD=${pwFile}`);
    for (const v of [TOKEN, PASSWORD]) {
      expect(script).not.toContain(v);
      expect(readFileSync(join(dir, 'job.yaml'), 'utf8')).not.toContain(v);
      expect(r.stdout + r.stderr).not.toContain(v);
    }
    // without the token anywhere, the job could not get it: refused before a script is written
    const missing = sflow(
      [
        'batch',
        '-p',
        'gpu',
        '-A',
        'proj',
        '-N',
        '1',
        '-f',
        'b.yaml',
        '--secret-file',
        `DB_PASSWORD=${pwFile}`,
        '--dry-run',
      ],
      {
        cwd: dir,
        env: { PATH: '/usr/bin:/bin' },
      },
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('API_TOKEN have no value here');
  });
});
