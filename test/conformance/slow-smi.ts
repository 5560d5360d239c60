/**
 * The conformance suites' slow allocation on a GPU backend: an nvidia-smi first on PATH that takes
 * a minute to answer, so the allocation of a GPU task waits on GPU discovery until cancelled.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resetLocalGpuCache } from '../../src/gpu/local-topology.js';

/** puts the slow nvidia-smi first on PATH; the returned function undoes it */
export function slowNvidiaSmi(): () => void {
  const bin = mkdtempSync(join(tmpdir(), 'sflow-slow-smi-'));
  writeFileSync(join(bin, 'nvidia-smi'), '#!/bin/sh\nexec sleep 60\n');
  chmodSync(join(bin, 'nvidia-smi'), 0o755);
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path ?? ''}`;
  resetLocalGpuCache();
  return () => {
    process.env.PATH = path;
    resetLocalGpuCache();
    rmSync(bin, { recursive: true, force: true });
  };
}
