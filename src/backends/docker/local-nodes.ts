/**
 * The nodes of a Docker backend without `hosts:`: `nodes` synthetic nodes on the one local engine,
 * named as the local backend names its own (`localhost`, `localhost-1`, …). The plan, the dry-run
 * and the run use this one list, so the container names `--dry-run` prints (`sflow-p<pid>-<task>-
 * <node>`) are the ones the run creates.
 */
import type { PlannedNode } from '../../plan/types.js';

export function localEngineNodes(count: number, gpusPerNode: number | null): PlannedNode[] {
  return Array.from({ length: Math.max(1, count) }, (_, i) => ({
    name: i === 0 ? 'localhost' : `localhost-${i}`,
    ip: '127.0.0.1',
    index: i,
    numGpus: gpusPerNode,
  }));
}
