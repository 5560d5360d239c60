/**
 * The image the serving samples run in on the Docker engines: the fixture's busybox image with
 * the stand-ins (test/fixtures/standins) at /opt/standins, first on PATH, and a /bin/bash that
 * runs busybox `sh` (sflow starts container scripts with `bash -lc`; real serving images have
 * bash). Built offline (`FROM` the local image) on each engine a test uses, removed after.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STANDINS } from '../../helpers/standins.js';
import type { Engine } from '../helpers/engines.js';

export const STANDIN_IMAGE = `sflowtest/standins:${process.pid}`;

export async function buildStandinImage(docker: Engine, hosts: string[]): Promise<void> {
  const ctx = mkdtempSync(join(tmpdir(), 'sflow-standin-image-'));
  try {
    cpSync(STANDINS, join(ctx, 'standins'), { recursive: true });
    writeFileSync(join(ctx, 'bash'), '#!/bin/sh\nexec /bin/sh "$@"\n', { mode: 0o755 });
    writeFileSync(
      join(ctx, 'Dockerfile'),
      [
        `FROM ${docker.get('SFLOW_TEST_DOCKER_IMAGE')}`,
        'COPY standins /opt/standins',
        'COPY bash /bin/bash',
        'ENV PATH=/opt/standins/bin:/bin',
        '',
      ].join('\n'),
    );
    for (const host of hosts) {
      const r = await docker.exec('docker', ['-H', host, 'build', '-q', '-t', STANDIN_IMAGE, ctx], {
        timeout: 120_000,
      });
      if (r.exitCode !== 0)
        throw new Error(`docker build of ${STANDIN_IMAGE} on ${host}: ${String(r.stderr)}`);
    }
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}

export async function removeStandinImage(docker: Engine, hosts: string[]): Promise<void> {
  for (const host of hosts) await docker.exec('docker', ['-H', host, 'rmi', '-f', STANDIN_IMAGE]);
}
