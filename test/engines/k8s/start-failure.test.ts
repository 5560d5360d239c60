/**
 * A pod that cannot start fails its task, named, on the emulator: an image the registry lacks
 * (ErrImagePull / ImagePullBackOff), a container that keeps crashing under `restart: OnFailure`
 * (CrashLoopBackOff), and a pod no node can take (a node_selector nothing matches) once it waited
 * past the backend's `reservation.timeout` — the reason says the bound and the setting that raises
 * it. Each run exits 1 within the test's bound and leaves nothing in the namespace.
 */
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { leftovers } from './backend-helpers.js';
import { required, sandboxMissing, waitFor } from './harness.js';
import { runRecipe } from './run-recipe.js';
import { withEmulator } from './with-emulator.js';

const missing = sandboxMissing();

function recipe(dir: string, name: string, operator: string[], timeout = 60): string {
  const f = join(dir, `${name}.yaml`);
  writeFileSync(
    f,
    [
      "version: '0.1'",
      'backends:',
      '  - name: cluster',
      '    type: kubernetes',
      '    default: true',
      '    namespace: default',
      '    nodes: 1',
      '    gpus_per_node: 4',
      '    reservation:',
      `      timeout: ${timeout}`,
      'operators:',
      '  - name: pod',
      '    type: k8s',
      ...operator.map((l) => `    ${l}`),
      'workflow:',
      `  name: ${name}`,
      '  tasks:',
      '    - name: t',
      '      operator: pod',
      "      script: ['echo started; exit 3']",
      '',
    ].join('\n'),
  );
  return f;
}

const reason = (runDir: string): string =>
  readFileSync(join(runDir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; task?: string; status?: string; reason?: string })
    .filter((e) => e.type === 'task_finished' && e.task === 't')
    .map((e) => `${e.status}: ${e.reason}`)
    .join(' | ');

describe.skipIf(missing !== undefined && !required)(
  `Kubernetes: a pod that cannot start fails its task${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    const dirs: string[] = [];
    const k = withEmulator(
      missing,
      { nodes: 1, gpus: 4, missingImages: ['sflow-test/no-such-image:1'] },
      { dirs },
    );
    const scratch = () => {
      const d = mkdtempSync(join(tmpdir(), 'sflow-k8s-start-'));
      dirs.push(d);
      return d;
    };
    const quiet = () =>
      waitFor('no object of the run left', () => leftovers(k.emu).length === 0 || undefined);

    it('an image the registry lacks: FAILED with ErrImagePull / ImagePullBackOff and the kubelet message', async () => {
      const r = await runRecipe(
        k,
        [recipe(scratch(), 'k8spull', ['image: sflow-test/no-such-image:1'])],
        [],
        dirs,
      );
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(reason(r.runDir)).toMatch(
        /^FAILED: pod \S+: (ErrImagePull|ImagePullBackOff): .*sflow-test\/no-such-image:1/,
      );
      await quiet();
    });

    it('a container that keeps crashing (restart: OnFailure): FAILED with CrashLoopBackOff', async () => {
      const r = await runRecipe(
        k,
        [recipe(scratch(), 'k8scrash', ['image: bash:5', 'restart: OnFailure'])],
        [],
        dirs,
      );
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(reason(r.runDir)).toMatch(/^FAILED: pod \S+: CrashLoopBackOff: back-off/);
      await quiet();
    });

    it('a pod no node can take: FAILED after reservation.timeout, naming the bound and the setting', async () => {
      const r = await runRecipe(
        k,
        [recipe(scratch(), 'k8ssched', ['image: bash:5', 'node_selector: {sflow-test/pool: nowhere}'], 5)],
        [],
        dirs,
      );
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(reason(r.runDir)).toMatch(
        /^FAILED: pod \S+ could not be scheduled within 5 s \(raise the backend's reservation\.timeout to wait longer\): .*node/,
      );
      await quiet();
    });
  },
);
