/**
 * The dry-run text streamed in pieces (`dryRunChunks`, written by `writePieces`): the pieces end
 * at line ends, are bounded, add up to the whole rendering for random plans, and are pulled only
 * as fast as the output drains.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backendCatalog } from '../../../src/backends/registry.js';
import { loadRecipe, type LoadedRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';
import { CHUNK_CHARS, dryRunChunks, renderDryRun } from '../../../src/plan/render.js';
import type { Plan } from '../../../src/plan/types.js';
import { writePieces } from '../../../src/util/write-pieces.js';
import { scratchDir } from '../../helpers/scratch.js';
import { randomRecipe } from './random-recipe.js';

const dir = scratchDir('sflow-render-stream-');
let n = 0;

function planOf(yaml: string): { plan: Plan; loaded: LoadedRecipe } {
  const file = join(dir, `r${++n}.yaml`);
  writeFileSync(file, yaml);
  const loaded = loadRecipe({ files: [file] });
  const plan = buildPlan(loaded, {
    dryRun: true,
    runId: 'run-1',
    workspaceDir: dir,
    catalog: backendCatalog,
  });
  return { plan, loaded };
}

const replicas = (count: number): string =>
  `workflow:\n  name: big\n  tasks:\n    - name: worker\n      replicas:\n        count: ${count}\n      script:\n        - echo "replica $SFLOW_REPLICA_INDEX"\n`;

/** a writable that completes each write later (a slow reader), recording what it received */
function slowSink(onWrite: () => void): { sink: Writable; text: () => string } {
  const got: Buffer[] = [];
  const sink = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _enc, done) {
      onWrite();
      got.push(chunk);
      setTimeout(done, 1);
    },
  });
  return { sink, text: () => Buffer.concat(got).toString('utf8') };
}

describe('dry-run text in pieces', () => {
  it('adds up to the whole text, every piece ending at a line end (property)', () => {
    fc.assert(
      fc.property(randomRecipe, fc.boolean(), (yaml, quiet) => {
        const { plan, loaded } = planOf(yaml);
        const pieces = [...dryRunChunks(plan, loaded, { quiet })];
        for (const p of pieces) expect(p.endsWith('\n')).toBe(true);
        const whole = renderDryRun(plan, loaded, { quiet });
        expect(pieces.join('')).toBe(`${whole}\n`);
        // every task block is there, in plan order
        if (!quiet) {
          let at = 0;
          plan.tasks.forEach((t, i) => {
            at = whole.indexOf(`\n  [${i + 1}] ${t.name}\n`, at);
            expect(at, t.name).toBeGreaterThan(0);
          });
        }
        expect(whole.endsWith(`Dry-run complete: ${plan.workflow}`)).toBe(true);
      }),
      { numRuns: 30 },
    );
  });

  it('splits 3,000 replicas into bounded pieces after the header', () => {
    const { plan, loaded } = planOf(replicas(3000));
    const pieces = [...dryRunChunks(plan, loaded)];
    expect(pieces.length).toBeGreaterThan(5);
    expect(pieces[0].endsWith('Task plan:\n')).toBe(true);
    // a piece is cut after the task block that reaches the bound: at most one block more
    for (const p of pieces.slice(1)) expect(p.length).toBeLessThan(CHUNK_CHARS + 2048);
    expect(pieces.join('')).toBe(`${renderDryRun(plan, loaded)}\n`);
  });

  it('writes piece by piece, pulling the next one only when the output has drained', async () => {
    const { plan, loaded } = planOf(replicas(3000));
    let pulled = 0;
    let written = 0;
    let ahead = 0;
    function* counted(): Generator<string> {
      for (const p of dryRunChunks(plan, loaded)) {
        pulled++;
        ahead = Math.max(ahead, pulled - written);
        yield p;
      }
    }
    const { sink, text } = slowSink(() => written++);
    await writePieces(sink, counted());
    await new Promise<void>((resolve) => sink.end(resolve));
    expect(text()).toBe(`${renderDryRun(plan, loaded)}\n`);
    expect(pulled).toBeGreaterThan(5);
    // never more than the piece being written and the next one
    expect(ahead).toBeLessThanOrEqual(2);
  });

  it('stops pulling when the output goes away', async () => {
    const { plan, loaded } = planOf(replicas(3000));
    let pulled = 0;
    function* counted(): Generator<string> {
      for (const p of dryRunChunks(plan, loaded)) {
        pulled++;
        yield p;
      }
    }
    const sink = new Writable({
      highWaterMark: 1024,
      write(_chunk, _enc, done) {
        setTimeout(() => done(Object.assign(new Error('gone'), { code: 'EPIPE' })), 1);
      },
    });
    sink.on('error', () => undefined);
    await writePieces(sink, counted());
    expect(pulled).toBeLessThanOrEqual(2);
  });
});
