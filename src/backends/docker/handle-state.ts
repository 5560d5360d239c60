/**
 * The Docker engine state of a handle: one member per container of the attempt, by container name
 * and the pool host (`ssh://…` endpoint) it runs on; no host: the local engine. Labels read
 * `name@host` (`name` locally); only `fromV1` reads such strings, from a version-1 ledger.
 */
import * as z from 'zod';
import type { HandleStateKind } from '../handle-state.js';

export const DockerHandleStateSchema = z.object({
  kind: z.literal('docker'),
  members: z.array(z.object({ container: z.string().min(1), host: z.string().min(1).optional() })).min(1),
});
export type DockerHandleState = z.infer<typeof DockerHandleStateSchema>;

/** the legacy parse: `name@host` (`name` on the local engine), one per container */
function dockerStateFromV1(remoteIds: string[]): DockerHandleState | { error: string } {
  if (remoteIds.length === 0) return { error: 'no container names' };
  const members = remoteIds.map((id) => {
    const at = id.indexOf('@');
    return at < 0 ? { container: id } : { container: id.slice(0, at), host: id.slice(at + 1) };
  });
  const bad = members.find((m) => !m.container || m.host === '');
  if (bad) return { error: `'${remoteIds[members.indexOf(bad)]}' is not <container>[@<host>]` };
  return { kind: 'docker', members };
}

export const dockerHandleState: HandleStateKind<'docker', DockerHandleState> = {
  type: 'docker',
  schema: DockerHandleStateSchema,
  labels: (s) => s.members.map((m) => (m.host ? `${m.container}@${m.host}` : m.container)),
  fromV1: dockerStateFromV1,
};
