/**
 * Local at scale: N independent tasks (`true`) and a sweep of N replicas (one task, `true`), for
 * N = 1,000, 3,000 and 10,000 by default. Reports wall time, the driver's peak memory (VmHWM of
 * the `sflow` process, sampled), events written, the time per added task between sizes. Prints a
 * table, writes bench/scale-local.json.
 *
 * Run (after `npm run build`):  node bench/scale-local.mjs [N…]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { independent, replicas } from './lib.mjs';
import { fit, marginal, phases, runEvents, runSflow, table, writeJson } from './scale-lib.mjs';

const SIZES = process.argv.slice(2).map(Number).filter(Boolean);

async function measure(kind, n) {
  const dir = mkdtempSync(join(tmpdir(), 'sflow-scale-local-'));
  try {
    const file = kind === 'tasks' ? independent(dir, n) : replicas(dir, n);
    const r = await runSflow(['run', '-f', file], { cwd: dir }).done;
    const p = phases(runEvents(dir));
    return {
      kind,
      n,
      exit: r.code,
      status: p.status,
      wallS: +(r.wallMs / 1000).toFixed(2),
      firstStartS: p.firstStartS,
      allStartedS: p.allStartedS,
      peakMiB: Math.round(r.peakMiB),
      events: p.events,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [];
for (const kind of ['tasks', 'replicas'])
  for (const n of SIZES.length ? SIZES : [1000, 3000, 10000]) {
    const row = await measure(kind, n);
    rows.push(row);
    console.error(JSON.stringify(row));
  }
console.log(table(rows, Object.keys(rows[0])));
for (const kind of ['tasks', 'replicas']) {
  const rs = rows.filter((r) => r.kind === kind);
  if (rs.length < 2) continue;
  const xs = rs.map((r) => r.n);
  const per = marginal(
    xs,
    rs.map((r) => r.wallS),
  ).map((v) => `${(v * 1000).toFixed(2)} ms`);
  console.log(
    `\n${kind}: wall per added task between sizes ${per.join(', ')}; wall ${JSON.stringify(
      fit(
        xs,
        rs.map((r) => r.wallS),
      ),
    )}`,
  );
  console.log(
    `${kind}: peak MiB ${JSON.stringify(
      fit(
        xs,
        rs.map((r) => r.peakMiB),
      ),
    )}`,
  );
}
console.log(`\nwrote ${writeJson('scale-local', { rows })}`);
