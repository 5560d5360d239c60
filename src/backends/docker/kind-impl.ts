/** What the Docker kind imports only when a run, a resume or `sflow recover` uses it (kind.ts). */
export { DockerBackend } from './docker-backend.js';
export { dockerLiveDriver, dockerRecoverRun } from './recover-run.js';
