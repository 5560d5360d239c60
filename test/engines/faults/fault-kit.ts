/**
 * What every fault of the suite shares: a driver started in the background, the fault injected
 * through the engine scripts' `fault` verbs (they act on the daemons of THIS $SFLOW_ENGINES_DIR
 * only), the ledger check (events.jsonl: valid JSON lines, one record each, opened by run_started
 * and closed by run_finished), and the table row each fault adds to docs/reliability.md.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN, REPO } from '../../helpers/cli.js';
import { enginesDir } from '../helpers/engines.js';

export interface FaultRow {
  fault: string;
  injected: string;
  outcome: string;
  /** seconds from the injection to the driver's exit (the verdict) */
  verdictS: number;
  /** what the suite found left of the run afterwards (processes, containers, steps, pods) */
  left: number;
}

/** `scripts/engines/<engine>.sh fault VERB DAEMON` on this suite's engines only */
export function fault(engineName: 'slurm' | 'docker' | 'ssh', verb: string, daemon: string): void {
  execFileSync('bash', [join(REPO, 'scripts', 'engines', `${engineName}.sh`), 'fault', verb, daemon], {
    env: { ...process.env, SFLOW_ENGINES_DIR: enginesDir() },
    stdio: 'pipe',
    timeout: 120_000,
  });
}

export interface Driver {
  child: ChildProcess;
  /** exit code once it ended; the time it ended (ms epoch) */
  done: Promise<{ code: number | null; at: number }>;
  out(): string;
  runDir(): string | undefined;
}

/** `sflow run <args>` in `cwd`, in the background, bounded by `timeoutMs` (then SIGKILL) */
export function startDriver(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 300_000,
): Driver {
  const child = spawn(process.execPath, [BIN, 'run', ...args], {
    cwd,
    env: { ...env, NO_COLOR: '1', SFLOW_TASK_OUTPUT: 'never' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += String(d)));
  child.stderr?.on('data', (d) => (out += String(d)));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, at: Date.now() });
    }),
  );
  return {
    child,
    done,
    out: () => out,
    runDir: () => {
      try {
        const d = readdirSync(join(cwd, 'sflow_output')).find((x) => !x.startsWith('_'));
        return d ? join(cwd, 'sflow_output', d) : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

/** polls `fn` (sync or async) until it is truthy; throws naming `what` after `ms` */
export async function until<T>(what: string, fn: () => T | Promise<T>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** the task's log holds `text` */
export const logHas = (runDir: string | undefined, task: string, text: string): boolean => {
  if (!runDir) return false;
  try {
    return readFileSync(join(runDir, task, `${task}.log`), 'utf8').includes(text);
  } catch {
    return false;
  }
};

export interface LedgerCheck {
  records: Array<{ type: string; [k: string]: unknown }>;
  /** lines that are not one JSON record each */
  torn: string[];
  opened: boolean;
  closed: boolean;
}

/** events.jsonl: every line one JSON record; opened by run_started, closed by run_finished */
export function checkLedger(runDir: string): LedgerCheck {
  const lines = readFileSync(join(runDir, 'events.jsonl'), 'utf8').split('\n').filter(Boolean);
  const records: LedgerCheck['records'] = [];
  const torn: string[] = [];
  for (const l of lines) {
    try {
      const r = JSON.parse(l) as { type?: unknown };
      if (typeof r.type === 'string') records.push(r as LedgerCheck['records'][number]);
      else torn.push(l);
    } catch {
      torn.push(l);
    }
  }
  return {
    records,
    torn,
    opened: records[0]?.type === 'run_started',
    closed: records.at(-1)?.type === 'run_finished',
  };
}

/** the reason a task ended with, from the ledger */
export function taskReason(c: LedgerCheck, task: string): string {
  const e = c.records.findLast((r) => r.type === 'task_finished' && r.task === task);
  return `${String(e?.status ?? '?')}${e?.reason ? `: ${String(e.reason)}` : ''}`;
}

/** live processes whose command line names `marker` (a run folder, a test's marker) */
export function processesNaming(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'latin1').includes(marker)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      if (!/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const BEGIN =
  '<!-- fault-table:begin (written by test/engines/faults; SFLOW_UPDATE_RELIABILITY=1 npm run test:faults) -->';
const END = '<!-- fault-table:end -->';
export const RELIABILITY_DOC = join(REPO, 'docs', 'reliability.md');

export function renderTable(rows: FaultRow[]): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [
    '| fault | injected how | outcome | time to verdict | left |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${cell(r.fault)} | ${cell(r.injected)} | ${cell(r.outcome)} | ${r.verdictS.toFixed(1)} s | ${r.left} |`,
    ),
  ].join('\n');
}

/** the rows of the doc's table (fault, injected how, outcome, left) — times are this machine's */
export function docRows(): Array<Omit<FaultRow, 'verdictS'>> {
  const doc = readFileSync(RELIABILITY_DOC, 'utf8');
  const table = doc.slice(doc.indexOf(BEGIN) + BEGIN.length, doc.indexOf(END));
  return table
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| fault |') && !l.startsWith('| ---'))
    .map((l) => {
      const c = l
        .slice(2, -2)
        .split(/ (?<!\\)\| /)
        .map((x) => x.replace(/\\\|/g, '|'));
      return { fault: c[0], injected: c[1], outcome: c[2], left: Number(c[4]) };
    });
}

/** rewrites the table between the markers (SFLOW_UPDATE_RELIABILITY=1) */
export function writeTable(rows: FaultRow[]): void {
  const doc = readFileSync(RELIABILITY_DOC, 'utf8');
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < 0) throw new Error(`${RELIABILITY_DOC}: the fault-table markers are missing`);
  writeFileSync(RELIABILITY_DOC, `${doc.slice(0, a + BEGIN.length)}\n${renderTable(rows)}\n${doc.slice(b)}`);
}
