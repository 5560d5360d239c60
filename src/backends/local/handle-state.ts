/**
 * The local engine state of a handle: the process group is the handle's `process`; a `docker_run`
 * task adds the name of its container (on this machine's engine), which outlives its client and
 * is removed by name. Label: the container name.
 */
import * as z from 'zod';
import type { HandleStateKind } from '../handle-state.js';

export const LocalHandleStateSchema = z.object({
  kind: z.literal('local'),
  container: z.string().min(1).optional(),
});
export type LocalHandleState = z.infer<typeof LocalHandleStateSchema>;

/** the legacy parse: a `docker_run` task's container name, else nothing */
function localStateFromV1(remoteIds: string[]): LocalHandleState | { error: string } {
  if (remoteIds.length > 1) return { error: `one container name expected, got ${remoteIds.length}` };
  const [container] = remoteIds;
  if (container === '') return { error: 'an empty container name' };
  return container === undefined ? { kind: 'local' } : { kind: 'local', container };
}

export const localHandleState: HandleStateKind<'local', LocalHandleState> = {
  type: 'local',
  schema: LocalHandleStateSchema,
  labels: (s) => (s.container ? [s.container] : []),
  fromV1: localStateFromV1,
};
