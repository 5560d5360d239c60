/** `type: docker` backends (backends.md §3.1–3.2). */
import * as z from 'zod';
import { bool, fail, intOrExpr, numOrExpr, refineNodeFilters, str } from './common.js';
import { list, strictObject, strList } from './shapes.js';

export const DockerHostSchema = strictObject('docker host', {
  name: str({ nonEmpty: true }),
  /** IP, DNS name or ssh config alias (0.3.2) */
  address: str().optional(),
  user: str().optional(),
  gpus_per_node: intOrExpr({ min: 0 }).nullable().optional(),
  mounts: strList('mounts').optional(),
  extra_args: strList('extra_args').optional(),
  rendezvous_address: str().optional(),
  /** 0.3.1 spelling of a remote host: `ssh://…` (replaced by `address`) */
  docker_host: str().optional(),
  /** 0.3.1 spelling: a docker context name (replaced by `address`) */
  context: str().optional(),
  /** 0.3.1 spelling of the peer address (replaced by `address`/`rendezvous_address`) */
  ip_address: str().optional(),
}).superRefine((h, ctx) => {
  const endpoints = (['address', 'docker_host', 'context'] as const).filter((k) => h[k] != null);
  if (endpoints.length === 0)
    fail(
      ctx,
      [],
      `docker host '${h.name}' needs an 'address'`,
      'an IP, DNS name or ~/.ssh/config alias of the machine',
    );
  else if (endpoints.length > 1)
    fail(
      ctx,
      [endpoints[1]],
      `docker host '${h.name}' sets both '${endpoints[0]}' and '${endpoints[1]}'; set only one`,
    );
});

export const DockerBackendSchema = strictObject('docker backend', {
  name: str(),
  type: z.literal('docker'),
  default: bool().optional(),
  gpus_per_node: intOrExpr({ min: 0 }).nullable().optional(),
  image: str().optional(),
  hosts: list(DockerHostSchema, 'hosts', true).optional(),
  nodes: intOrExpr({ min: 1 }).optional(),
  mounts: strList('mounts').optional(),
  workdir: str().optional(),
  extra_args: strList('extra_args').optional(),
  offload_task_logs: bool().optional(),
  include_nodes: strList('include_nodes').optional(),
  exclude_nodes: strList('exclude_nodes').optional(),
  /** seconds to wait for busy GPUs; 0 = forever */
  wait_for_gpus: numOrExpr({ min: 0 }).optional(),
}).superRefine((b, ctx) => {
  refineNodeFilters(b, ctx);
  if (!b.hosts) return;
  const filtered = Boolean(b.include_nodes?.length || b.exclude_nodes?.length); // checked by the plan
  if (typeof b.nodes === 'number' && b.nodes !== b.hosts.length && !filtered) {
    fail(
      ctx,
      ['nodes'],
      `backend '${b.name}': nodes (${b.nodes}) disagrees with the number of hosts (${b.hosts.length})`,
      "with 'hosts:' the host list is the node list; drop 'nodes' or make it match",
    );
  }
  const seen = new Set<string>();
  b.hosts.forEach((h, i) => {
    if (seen.has(h.name))
      fail(ctx, ['hosts', i, 'name'], `backend '${b.name}': duplicate host name '${h.name}'`);
    seen.add(h.name);
  });
});

export type DockerHost = z.output<typeof DockerHostSchema>;
export type DockerBackend = z.output<typeof DockerBackendSchema>;
