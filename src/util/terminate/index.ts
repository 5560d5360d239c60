/** Stopping process groups, split as execa's terminate/ is: graceful stop, deadline, kill the group, cleanup on exit. */
export {
  stopGroup,
  DEFAULT_GRACE_MS,
  KILL_WAIT_MS,
  type GroupStopOutcome,
  type StopGroupOptions,
} from './stop-group.js';
export { waitGroupGone, type WaitGoneOptions } from './wait-gone.js';
export { signalGroup } from './signal-group.js';
export { trackGroup, untrackGroup, liveGroups, killAllGroupsSync, installExitHook } from './cleanup.js';
