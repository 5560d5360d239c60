/**
 * Output collect for single-pod `k8s` tasks (backends.md §5.5): the pod's EXIT trap staged the
 * files under $SFLOW_WORKFLOW_OUTPUT_DIR in a tarball and announced it on the log; the driver
 * copies it (an exec `cat` of the finished task's tarball — never an exec into a running script),
 * unpacks into the run directory only the files missing there (never overwriting one), then
 * tells the trap it may end. Bounded by `collect_grace_seconds`, with a heartbeat every 30 s.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { existsSync } from 'node:fs';
import { boundedExec } from '../../util/bounded-exec.js';
import { errorMessage } from '../../util/errors.js';
import type { PodAttempt } from './attempt.js';
import type { K8sRun } from './run-context.js';

const HEARTBEAT_MS = 30_000;

export async function startCollect(
  r: K8sRun,
  a: PodAttempt,
  pod: string,
  tarPath: string,
  files: number,
  runDir: string,
): Promise<void> {
  const task = a.handle.task;
  const graceS = r.settings.collectGraceS;
  const t0 = Date.now();
  const beat = setInterval(
    () =>
      r.log(
        `Task '${task}': still copying ${files} output file(s) from pod ${pod} (${Math.round((Date.now() - t0) / 1000)}s)`,
        'info',
      ),
    HEARTBEAT_MS,
  );
  const dir = mkdtempSync(join(tmpdir(), 'sflow-collect-'));
  const stage = tarPath.replace(/\/out\.tar$/, '');
  try {
    const tar = join(dir, 'out.tar');
    const fd = openSync(tar, 'w');
    try {
      const got = await r.api.exec(pod, 'main', ['cat', tarPath], {
        timeoutMs: Math.max(5_000, graceS * 1000),
        sink: (c) => writeSync(fd, c),
        trace: ['collect'],
      });
      if (got.exitCode !== 0)
        throw new Error(
          `cat ${tarPath} exited ${got.exitCode ?? '?'}: ${got.stderr.trim() || got.message || ''}`,
        );
    } finally {
      closeSync(fd);
    }
    const list = await boundedExec('tar', ['-tf', tar], { timeoutMs: 60_000 });
    if (!list.ok) throw new Error(`tar -tf: ${list.stderr.trim() || list.errorMessage || 'failed'}`);
    const names = list.stdout.split('\n').filter((n) => n && !n.endsWith('/'));
    const missing = names.filter((n) => !existsSync(join(runDir, normalize(n))));
    if (missing.length) {
      const x = await boundedExec('tar', ['-xf', tar, '-C', runDir, '--skip-old-files', ...missing], {
        timeoutMs: 120_000,
      });
      if (!x.ok) throw new Error(`tar -x: ${x.stderr.trim() || x.errorMessage || 'failed'}`);
    }
    // the normal end of a task with outputs: information, not a warning
    r.log(
      `Task '${task}': collected ${missing.length} file(s) from pod ${pod} into ${runDir}; kept ${names.length - missing.length} existing driver file(s) (not overwritten)`,
      'info',
    );
  } catch (e) {
    r.log(
      `Task '${task}': output copy from pod ${pod} failed after ${Math.round((Date.now() - t0) / 1000)}s (collect_grace_seconds=${graceS}; collect_node_local_output: false turns collect off): ${errorMessage(e)}`,
    );
  } finally {
    clearInterval(beat);
    rmSync(dir, { recursive: true, force: true });
    await r.api
      .exec(pod, 'main', ['touch', `${stage}/done`], { timeoutMs: 30_000, trace: ['collect-done'] })
      .catch(() => undefined);
  }
}
