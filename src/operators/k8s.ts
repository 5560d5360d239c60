/**
 * Kubernetes operators run the script inside the pod's container (`bash -lc <script>`); the pod
 * spec itself (image, resources, volumes) is built by the Kubernetes backend from the operator
 * config, which the plan keeps.
 */
import type { ArgvBuilder, Operator } from './types.js';

export const k8sExtras: NonNullable<Operator['extras']> = ({ config }) => ({
  ...(config.image ? { image: String(config.image) } : {}),
  mounts: [],
  ...(config.working_dir ? { cwd: String(config.working_dir) } : {}),
});

export const k8sArgv: ArgvBuilder = ({ script, config }) => [
  ...((config.command as string[] | undefined) ?? ['bash', '-lc']).map(String),
  script,
];
