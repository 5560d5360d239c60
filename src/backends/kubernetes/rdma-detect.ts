/**
 * RDMA detection at allocation (backends.md §5.5, experimental): the HCAs a reserved node has
 * (an exec `ls /sys/class/infiniband` in its placeholder) and the RDMA resources its allocatable
 * offers (GKE's `networking.gke.io.networks/rdma-N`, a shared `rdma/*` device plugin). Best
 * effort: anything it cannot read means "none".
 */
import type { RdmaFound } from './dra.js';
import type { Reservation } from './reservation.js';
import type { K8sRun } from './run-context.js';

export async function detectRdma(r: K8sRun, res: Reservation, signal: AbortSignal): Promise<RdmaFound> {
  const found: RdmaFound = { hcas: [], gkeNetworks: [] };
  const first = res.nodes[0];
  if (!first?.placeholder) return found;
  try {
    const got = await r.api.exec(
      first.placeholder,
      'main',
      ['sh', '-c', 'ls /sys/class/infiniband 2>/dev/null || true'],
      {
        timeoutMs: 15_000,
        signal,
        trace: ['rdma-detect'],
      },
    );
    found.hcas = got.stdout.toString('utf8').split(/\s+/).filter(Boolean);
  } catch {
    // no exec, no HCAs known
  }
  try {
    const node = await r.api.call(
      'read',
      'get',
      'nodes',
      first.name,
      (o) => r.api.core.readNode({ name: first.name }, o),
      { signal },
    );
    const keys = Object.keys(node.status?.allocatable ?? {});
    found.gkeNetworks = keys.filter((k) => /^networking\.gke\.io\.networks\/rdma-\d+$/.test(k)).sort();
    const shared = keys.find((k) => k.startsWith('rdma/'));
    if (shared) found.sharedResource = shared;
  } catch {
    // nodes not readable
  }
  return found;
}
