/**
 * Merge-pod on the emulator (backends.md §5.3): same-node single-GPU tasks share one pod; each
 * member gets its own demuxed log, readiness, exit code and gate. The original tool's smoke
 * recipe (services that never exit + a gated terminal member) completes; a failing member keeps
 * its own exit code and its gated dependent never runs. Nothing of the run is left behind.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { taskLog, taskTable } from '../../helpers/run-dir.js';
import { sharedMissing, sharedPath } from '../../helpers/shared.js';
import { leftovers } from './backend-helpers.js';
import { required, sandboxMissing } from './harness.js';
import { withEmulator } from './with-emulator.js';
import { runRecipe } from './run-recipe.js';

const HERE = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'recipes');
/** a `bash` that starts 2 s late, mounted at /usr/local in the pods of SLOW_IMAGE */
const SLOW_START = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'slow-start');
const SLOW_IMAGE = 'sflowtest/slow-start:1';
const SMOKE = 'compat/examples/self_contained/kubernetes/merge_pod_smoke.yaml';
const missing = sandboxMissing();
const noShared = sharedMissing(SMOKE);

describe.skipIf(missing !== undefined && !required)(
  `merged pods on the emulator${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const dirs: string[] = [];
    const k = withEmulator(
      missing,
      { nodes: 1, gpus: 4, images: { [SLOW_IMAGE]: { mounts: [{ src: SLOW_START, dst: '/usr/local' }] } } },
      { dirs },
    );

    it.skipIf(noShared !== undefined && process.env.SFLOW_REQUIRE_SHARED !== '1')(
      `the original merge_pod_smoke recipe completes: services hold the pod, the gated terminal member ends the run${noShared ? ` (skipped: ${noShared})` : ''}`,
      async () => {
        const r = await runRecipe(k, [sharedPath(SMOKE)], ['-s', 'SERVER_IMAGE=bash:5'], dirs);
        expect(r.code, r.stderr + r.stdout).toBe(0);
        expect(r.statuses).toEqual({
          service_a: 'READY',
          service_b: 'READY',
          warmup: 'COMPLETED',
          client: 'COMPLETED',
        });
        // one pod's stream, demuxed: each member's log holds only its own lines
        expect(taskLog(r.runDir, 'service_a')).toMatch(
          /^\[smoke\] service_a starting in \S+\nSERVICE_A READY\n$/,
        );
        expect(taskLog(r.runDir, 'service_b')).not.toContain('service_a');
        const warmup = taskLog(r.runDir, 'warmup');
        expect(warmup).toMatch(/warmup CUDA_VISIBLE_DEVICES=\d,\d,\d,\d\n/);
        expect(warmup).toMatch(/warmup OK: finished while the services keep serving\n$/);
        expect(taskLog(r.runDir, 'client')).toMatch(/client OK: terminal member completed/);
        const summary = readFileSync(join(r.runDir, 'sflow_summary.log'), 'utf8');
        expect(summary).toMatch(/client\s+SUBMITTED\s+attempt=1 gated_on=service_a,service_b/);
        expect(summary).toMatch(/client\s+UNGATED/);
        expect(leftovers(k.emu)).toEqual([]);
      },
    );

    it('a failing member keeps its own exit code; its gated dependent never runs', async () => {
      const r = await runRecipe(k, [join(HERE, 'merge-fail.yaml')], [], dirs);
      expect(r.code, r.stderr + r.stdout).not.toBe(0);
      const table = taskTable(r.runDir);
      expect(table.ok.status).toBe('COMPLETED');
      expect(table.bad.status).toBe('FAILED');
      expect(table.bad.exit).toBe('3');
      expect(table.after_bad.status).not.toMatch(/COMPLETED|RUNNING|FAILED/);
      // the last line without a newline stays so (the three share one GPU slot, one after another)
      expect(taskLog(r.runDir, 'ok')).toMatch(/^ok line 1\nok: no newline, CUDA_VISIBLE_DEVICES=0$/);
      expect(taskLog(r.runDir, 'bad')).toBe('bad says goodbye\n');
      expect(taskLog(r.runDir, 'after_bad')).toBe('');
      const summary = readFileSync(join(r.runDir, 'sflow_summary.log'), 'utf8');
      expect(summary).toMatch(/bad\s+SUBMITTED\s+attempt=1 gated_on=ok/);
      expect(leftovers(k.emu)).toEqual([]);
    });

    it("a gate opened before the pod's slow shell has made its gate folder still opens", async () => {
      // the pod runs (the kubelet says so) 2 s before its supervisor does anything: the second
      // member's gate is opened in that window, and must not be lost (it once hung the run)
      const r = await runRecipe(k, [join(HERE, 'merge-slow-start.yaml')], [], dirs);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(r.statuses).toEqual({ first: 'COMPLETED', second: 'COMPLETED' });
      expect(taskLog(r.runDir, 'second')).toBe('second ran\n');
      expect(leftovers(k.emu)).toEqual([]);
    });
  },
);
