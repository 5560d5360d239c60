/** The Kubernetes command-line flags (cli.md), shared by `run` and `recover`. */
import type { Command } from 'commander';

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function kubeFlags(cmd: Command): Command {
  return cmd
    .option(
      '--kubeconfig <path>',
      'Kubernetes credentials (default: $KUBECONFIG, else ~/.kube/config; never from YAML)',
    )
    .option('--kube-context <name>', 'kubeconfig context (default: the current one)')
    .option('--kube-namespace <name>', "namespace (default: the backend's namespace)")
    .option('--kube-skip-pvc', 'drop PVC-backed volumes (debugging on a cluster without them)')
    .option(
      '--extra-kubectl-args <args>',
      'kubectl-style global flags mapped onto the API client: --context, --namespace, --kubeconfig, --request-timeout, --insecure-skip-tls-verify',
      collect,
    )
    .option(
      '--extra-kubectl-apply-args <args>',
      'kubectl-apply-style flags mapped onto object creation: --validate=strict|warn|ignore, --field-manager (repeatable)',
      collect,
    );
}
