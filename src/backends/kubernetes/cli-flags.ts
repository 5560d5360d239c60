/**
 * The Kubernetes command-line flags (cli.md), on `run` and `recover`: where a run's objects live
 * when its run record is not enough. `kube-options.ts` reads them from the option bag.
 */
import type { BackendCliFlag } from '../kind.js';

const both = ['run', 'recover'] as const;

export const KUBERNETES_CLI_FLAGS: readonly BackendCliFlag[] = [
  {
    flags: '--kubeconfig <path>',
    description: 'Kubernetes credentials (default: $KUBECONFIG, else ~/.kube/config; never from YAML)',
    commands: both,
  },
  {
    flags: '--kube-context <name>',
    description: 'kubeconfig context (default: the current one)',
    commands: both,
  },
  {
    flags: '--kube-namespace <name>',
    description: "namespace (default: the backend's namespace)",
    commands: both,
  },
  {
    flags: '--kube-skip-pvc',
    description: 'drop PVC-backed volumes (debugging on a cluster without them)',
    commands: both,
  },
  {
    flags: '--extra-kubectl-args <args>',
    description:
      'kubectl-style global flags mapped onto the API client: --context, --namespace, --kubeconfig, --request-timeout, --insecure-skip-tls-verify',
    repeatable: true,
    commands: both,
  },
  {
    flags: '--extra-kubectl-apply-args <args>',
    description:
      'kubectl-apply-style flags mapped onto object creation: --validate=strict|warn|ignore, --field-manager (repeatable)',
    repeatable: true,
    commands: both,
  },
];
