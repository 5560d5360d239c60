/**
 * The remote session folder `<remote root>/runs/<session>/` (never deleted once a run started):
 *
 *   inputs/recipe.yaml        the composed recipe (uploaded)
 *   inputs/workspace/…        relative file:// and fs:// inputs (uploaded); the controller's cwd
 *   output/                   the controller's --output-dir: controller.log + the run folder
 *   state/supervisor.pid      the detached supervisor (its process group holds the controller)
 *   state/controller.pid      the sflow controller
 *   state/exit.json           written when the controller ended: { code, state, ended }
 *
 * and the remote cache `<remote root>/bin/sflow-<version>-<build>-linux-<arch>` (copied executables).
 */
import { join } from 'node:path';

export const DEFAULT_REMOTE_ROOT = '.sflow/remote'; // relative to the remote $HOME

export function sessionPaths(session: string) {
  return {
    session,
    inputs: join(session, 'inputs'),
    recipe: join(session, 'inputs', 'recipe.yaml'),
    workspace: join(session, 'inputs', 'workspace'),
    output: join(session, 'output'),
    controllerLog: join(session, 'output', 'controller.log'),
    state: join(session, 'state'),
    supervisorPid: join(session, 'state', 'supervisor.pid'),
    controllerPid: join(session, 'state', 'controller.pid'),
    exit: join(session, 'state', 'exit.json'),
  };
}

export type SessionPaths = ReturnType<typeof sessionPaths>;

export type RemoteState = 'running' | 'completed' | 'failed' | 'cancelled' | 'unknown';

export interface ExitRecord {
  code: number;
  state: RemoteState;
  ended: string;
}

/** How a controller exit code reads: 0 completed, 130/143 cancelled, else failed. */
export function stateOfCode(code: number): RemoteState {
  if (code === 0) return 'completed';
  if (code === 130 || code === 143) return 'cancelled';
  return 'failed';
}

/** The line the remote agent ends its output with; the local side reads the outcome from it. */
export const END_MARK = '@@sflow-remote-end';

export function endLine(r: { code: number; state: RemoteState }): string {
  return `${END_MARK} code=${r.code} state=${r.state}@@`;
}

export function parseEndLine(line: string): { code: number; state: RemoteState } | undefined {
  const m = /@@sflow-remote-end code=(-?\d+) state=(\w+)@@/.exec(line);
  return m ? { code: Number(m[1]), state: m[2] as RemoteState } : undefined;
}
