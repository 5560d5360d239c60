/** What the Kubernetes kind imports only when a run, a resume or `sflow recover` uses it (kind.ts). */
export { KubernetesBackend } from './kubernetes-backend.js';
export { reapRun } from './reap.js';
