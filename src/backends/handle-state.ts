/**
 * Backend-owned handle state: each backend kind declares the type of its engine state (what its
 * engine calls an attempt), the zod schema that narrows a handle's `engine` to it, how that state
 * reads as display labels (`remoteIds`), and one legacy parse for the engine-id strings that
 * version-1 ledgers carried. `engineStateOf` is the named parse boundary every verb that reads
 * engine names goes through (`recover` first of all): a state of another kind, a malformed one or
 * an unreadable v1 id is an SflowError that says which attempt and why, never a guess.
 */
import type * as z from 'zod';
import { isV1EngineState, type EngineState, type TaskHandle } from '../events/handle.js';
import type { BackendType } from '../plan/types.js';
import { SflowError } from '../util/sflow-error.js';

export type { EngineState };

/** what one backend kind declares about its handles' engine state */
export interface HandleStateKind<T extends BackendType, S extends EngineState & { kind: T }> {
  type: T;
  /** narrows a handle's `engine` to the kind's own state (its `kind` a literal of `type`) */
  schema: z.ZodType<S>;
  /** display labels of a state, one per member (`job.step`, `name@host`, `ns/pod`) */
  labels(state: S): string[];
  /**
   * The legacy parse: the state from the `remoteIds` strings a version-1 ledger recorded (the
   * only place those strings are read), or why they do not make one.
   */
  fromV1(remoteIds: string[]): S | { error: string };
}

/** the handle fields an engine state fills: the state and its labels, always derived together */
export function engineFields<T extends BackendType, S extends EngineState & { kind: T }>(
  kind: HandleStateKind<T, S>,
  state: S,
): Pick<TaskHandle, 'engine' | 'remoteIds'> {
  return { engine: state, remoteIds: kind.labels(state) };
}

type Who = Pick<TaskHandle, 'task' | 'attempt' | 'backend'> & { engine?: unknown };

function refuse(kind: { type: string }, h: Who, why: string): SflowError {
  return new SflowError(
    'run.handle_state',
    `handle of ${h.task}#${h.attempt} (backend '${h.backend}'): ${why}`,
    {
      phase: 'run',
      hint: `the ledger record is not one a ${kind.type} backend of this sflow wrote; check the run's handles.jsonl (nothing was stopped for this attempt)`,
    },
  );
}

/**
 * The parse boundary: a handle's engine state as its kind's own type. Throws an SflowError
 * (`run.handle_state`) for a state of another kind, a malformed one, or v1 ids the kind's legacy
 * parse cannot read.
 */
export function engineStateOf<T extends BackendType, S extends EngineState & { kind: T }>(
  kind: HandleStateKind<T, S>,
  h: Who,
): S {
  const e = h.engine;
  if (typeof e !== 'object' || e === null)
    throw refuse(kind, h, 'it has no engine state (a ledger line of another version, or edited)');
  const tag = 'kind' in e ? e.kind : undefined;
  if (tag !== kind.type)
    throw refuse(kind, h, `its engine state is of kind '${String(tag)}', not '${kind.type}'`);
  if (isV1EngineState(e)) {
    const got = kind.fromV1(e.v1RemoteIds);
    if ('error' in got) throw refuse(kind, h, `its version-1 ids cannot be read: ${got.error}`);
    return got;
  }
  const r = kind.schema.safeParse(e);
  if (!r.success) {
    const why = r.error.issues.map((i) => `${i.path.join('.') || '(state)'}: ${i.message}`).join('; ');
    throw refuse(kind, h, `its ${kind.type} engine state is malformed (${why})`);
  }
  return r.data;
}
