#!/usr/bin/env node
// npm run test:mutation [-- --group expr,plan] [--budget-s 900] [--force]
//
// StrykerJS on the core modules (stryker.config.mjs; docs/testing.md "Mutation testing"), one
// module group at a time, each with its own incremental report test/mutation/<group>.json kept in
// the repository: a later run re-tests only the mutants whose code or covering tests changed.
// Then the score of all groups together — Stryker's formula, (killed + timeout) / (killed +
// timeout + survived + no coverage) — is printed and checked against the floor (80 %): below it,
// or past the time budget, the exit code is 1.
//
// A group's first run can outlast one budget (expr: 4,538 mutants, hours on 2 cores). Stopped by
// the budget or a signal, Stryker saves what it tested so far; when the group had no complete
// report, that partial report is kept as test/mutation/<group>.partial.json, and the next run of
// the group starts from it (Stryker re-tests only what is missing or changed). --stored-only (CI)
// checks complete reports only; the score table lists a partial one apart, not in the sum.
//
// Stryker 10 needs Node >= 22: on an older Node the pinned Node 24 (scripts/node-dist.mjs) runs it.
import { spawn, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { groups } from '../stryker.config.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function parseArgs(argv) {
  const o = { groups: Object.keys(groups), budgetS: 3600, force: false, storedOnly: false, floor: 80 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--group') o.groups = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (a === '--budget-s') o.budgetS = Number(argv[++i]);
    else if (a === '--force') o.force = true;
    else if (a === '--floor') o.floor = Number(argv[++i]);
    else if (a === '--stored-only') o.storedOnly = true;
    else if (a === '-h' || a === '--help') {
      console.log(
        'usage: node scripts/mutation.mjs [--group g1,g2] [--budget-s S] [--floor P (80)] [--force] [--stored-only]',
      );
      console.log(`groups: ${Object.keys(groups).join(', ')}`);
      console.log('--stored-only: only the groups that have a stored report (CI: an incremental check)');
      process.exit(0);
    } else {
      console.error(`unknown argument '${a}' (try --help)`);
      process.exit(2);
    }
  }
  const unknown = o.groups.filter((g) => !groups[g]);
  if (unknown.length || !(o.budgetS > 0) || !(o.floor >= 0 && o.floor <= 100)) {
    console.error(
      `unknown group ${unknown.join(', ') || '(none)'} or bad --budget-s / --floor; groups: ${Object.keys(groups).join(', ')}`,
    );
    process.exit(2);
  }
  return o;
}

/** a node that Stryker accepts: this one when it is 22 or newer, else the pinned Node 24 */
function strykerNode() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const dir = execFileSync(process.execPath, [join(ROOT, 'scripts', 'node-dist.mjs'), 'bin'], {
    encoding: 'utf8',
    timeout: 900_000,
  }).trim();
  return join(dir, 'node');
}

const reportOf = (g) => join(ROOT, 'test', 'mutation', `${g}.json`);
const partialOf = (g) => join(ROOT, 'test', 'mutation', `${g}.partial.json`);

/** mutant counts of one stored report, by status */
function counts(file) {
  const c = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, other: 0 };
  const report = JSON.parse(readFileSync(file, 'utf8'));
  for (const f of Object.values(report.files))
    for (const m of f.mutants) {
      if (m.status in c) c[m.status]++;
      else c.other++; // CompileError, RuntimeError, Ignored, Pending: not in the score
    }
  return c;
}

/** mutants with a result in a report (a partial one lacks those not tested yet) */
const tested = (file) => Object.values(counts(file)).reduce((a, b) => a + b, 0);

const score = (c) => {
  const detected = c.Killed + c.Timeout;
  const valid = detected + c.Survived + c.NoCoverage;
  return valid === 0 ? 100 : (100 * detected) / valid;
};

function runGroup(node, g, deadline, force) {
  const args = [
    join(ROOT, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js'),
    'run',
    'stryker.config.mjs',
    '--mutate',
    groups[g].join(','),
    '--incrementalFile',
    reportOf(g),
  ];
  if (force) args.push('--force');
  let interrupted = false;
  return new Promise((done) => {
    // Stryker tests a copy in .stryker-tmp/: its `../shared` is not the repository's
    const shared = resolve(ROOT, '..', 'shared');
    const env = existsSync(shared) ? { ...process.env, SFLOW_SHARED_DIR: shared } : process.env;
    const child = spawn(node, args, { cwd: ROOT, stdio: 'inherit', detached: true, env });
    const left = deadline - Date.now();
    // past the budget Stryker is stopped; it saves what it tested, and the run ends once it has
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        console.error(`!! mutation: the time budget ran out during group '${g}'; stopping Stryker`);
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          /* gone */
        }
        setTimeout(() => {
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            /* gone */
          }
        }, 60_000).unref();
      },
      Math.max(left, 0),
    );
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      done(interrupted ? 'interrupted' : timedOut ? 'timeout' : code === 0 ? 'ok' : `exit ${code ?? signal}`);
    });
    // a signal stops Stryker, which saves what it tested; the run ends once it has
    const stop = () => {
      interrupted = true;
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* gone */
      }
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

const opts = parseArgs(process.argv.slice(2));
const started = Date.now();
const deadline = started + opts.budgetS * 1000;
const todo = opts.storedOnly ? opts.groups.filter((g) => existsSync(reportOf(g))) : opts.groups;
const skipped = opts.groups.filter((g) => !todo.includes(g));
if (skipped.length)
  console.warn(
    `!! mutation: no stored report yet for ${skipped.join(', ')}: not checked (run npm run test:mutation -- --group ${skipped.join(',')}; it goes on from a partial report where there is one)`,
  );
const node = strykerNode();
let failed = false;
let interrupted = false;
for (const g of todo) {
  const t0 = Date.now();
  console.log(`== mutation: group ${g} (${groups[g].join(' ')})`);
  // a first run that was stopped before: go on from what it tested
  const resumed = !existsSync(reportOf(g)) && existsSync(partialOf(g)) && !opts.force;
  if (resumed) {
    copyFileSync(partialOf(g), reportOf(g));
    console.log(
      `   going on from the partial report ${partialOf(g)} (${tested(partialOf(g))} mutants reached)`,
    );
  }
  const first = resumed || !existsSync(reportOf(g));
  // a complete report is kept as it was when this run does not complete (Stryker would leave a
  // partial one in its place, which a later --stored-only would read as complete)
  const before = `${reportOf(g)}.before`;
  if (!first) copyFileSync(reportOf(g), before);
  const r = await runGroup(node, g, deadline, opts.force);
  console.log(`== mutation: group ${g}: ${r}, ${Math.round((Date.now() - t0) / 1000)} s`);
  if (!first) {
    if (r === 'ok') rmSync(before, { force: true });
    else {
      renameSync(before, reportOf(g));
      console.log(`   the stored report is kept as it was: this run did not complete`);
    }
  }
  if (r === 'ok') rmSync(partialOf(g), { force: true });
  else if (first && existsSync(reportOf(g))) {
    // not complete: kept apart, so that --stored-only does not take it for a stored report
    renameSync(reportOf(g), partialOf(g));
    console.log(
      `   partial report kept: ${partialOf(g)} (${tested(partialOf(g))} mutants reached; run the group again to go on)`,
    );
  }
  if (r !== 'ok') {
    failed = true;
    interrupted = r === 'interrupted';
    break;
  }
}
// the score of every group that has a stored report (those just run are fresh; one that did not
// complete keeps the report it had)
const total = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, other: 0 };
console.log('== mutation score (Stryker: killed+timeout / killed+timeout+survived+no coverage)');
for (const g of Object.keys(groups)) {
  if (!existsSync(reportOf(g))) {
    const partial = existsSync(partialOf(g))
      ? `partial: ${tested(partialOf(g))} mutants reached so far, ${score(counts(partialOf(g))).toFixed(2)} % of the valid ones (not in the sum)`
      : 'not measured yet';
    console.log(`   ${g.padEnd(9)} ${partial}`);
    continue;
  }
  const c = counts(reportOf(g));
  for (const k of Object.keys(total)) total[k] += c[k];
  console.log(
    `   ${g.padEnd(9)} ${score(c).toFixed(2).padStart(6)} %  killed ${c.Killed}, timeout ${c.Timeout}, survived ${c.Survived}, no coverage ${c.NoCoverage}`,
  );
}
const measured = total.Killed + total.Timeout + total.Survived + total.NoCoverage;
if (measured === 0) {
  console.error('!! mutation: no group has a stored report: nothing was measured');
  process.exit(1);
}
const all = score(total);
console.log(
  `   ${'all'.padEnd(9)} ${all.toFixed(2).padStart(6)} %  (floor ${opts.floor} %), ${Math.round((Date.now() - started) / 1000)} s`,
);
if (all < opts.floor) {
  console.error(`!! mutation score ${all.toFixed(2)} % is below the floor of ${opts.floor} %`);
  failed = true;
}
process.exit(interrupted ? 130 : failed ? 1 : 0);
