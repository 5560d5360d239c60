/**
 * Credentials and command-line settings of the Kubernetes backend (cli.md: `--kubeconfig`,
 * `--kube-context`, `--kube-namespace`, `--extra-kubectl-args`, `--extra-kubectl-apply-args`).
 * Credentials come from the command line and the environment only, never from a recipe.
 *
 * sflow talks to the API server through client-node, not kubectl, so the kubectl pass-through
 * flags are mapped onto the client where they have a meaning and refused otherwise:
 *
 *   --extra-kubectl-args        --context X, --namespace/-n X, --kubeconfig X (same as the flags),
 *                               --request-timeout D (caps every read), --insecure-skip-tls-verify
 *   --extra-kubectl-apply-args  --validate=strict|warn|ignore|true|false (fieldValidation of the
 *                               creates), --field-manager X; --server-side / --force-conflicts
 *                               have nothing to act on (sflow creates, never applies): warned
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { SflowError } from '../../util/sflow-error.js';
import { errorMessage } from '../../util/errors.js';
import type { KubeTarget } from './client.js';

/** the command line's options kubeFlags reads (commander's values, checked here) */
export interface KubeFlagOptions {
  kubeconfig?: unknown;
  kubeContext?: unknown;
  kubeNamespace?: unknown;
  extraKubectlArgs?: unknown;
  extraKubectlApplyArgs?: unknown;
}

const APPLY_ONLY = [
  '--server-side',
  '--force-conflicts',
  '--validate',
  '--field-manager',
  '--prune',
  '--overwrite',
];

function words(v: unknown): string[] {
  const list = Array.isArray(v) ? v : v === undefined || v === null || v === false ? [] : [v];
  return list.flatMap((x) => String(x).trim().split(/\s+/)).filter(Boolean);
}

function usage(message: string, hint: string): SflowError {
  return new SflowError('k8s.cli_flag', message, { phase: 'preflight', hint, exitCode: 2 });
}

export interface KubeFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  requestTimeoutMs?: number;
  insecure?: boolean;
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
  fieldManager?: string;
  /** notes for the driver log (flags with nothing to act on) */
  warnings: string[];
}

/** `--extra-kubectl-args` flags that fill a connection setting the dedicated `--kube*` flags win over */
const DEDICATED: Readonly<Record<string, 'context' | 'namespace' | 'kubeconfig'>> = {
  '--context': 'context',
  '--namespace': 'namespace',
  '-n': 'namespace',
  '--kubeconfig': 'kubeconfig',
};

function duration(v: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v);
  if (!m)
    throw usage(
      `--request-timeout ${v}: expected a duration like 30s`,
      'e.g. --extra-kubectl-args "--request-timeout 20s"',
    );
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : m[2] === 'h' ? n * 3_600_000 : n * 1000;
}

/** The command line's Kubernetes settings, kubectl pass-through flags mapped (or refused). */
export function kubeFlags(options: KubeFlagOptions): KubeFlags {
  const f: KubeFlags = { warnings: [] };
  if (typeof options.kubeconfig === 'string') f.kubeconfig = options.kubeconfig;
  if (typeof options.kubeContext === 'string') f.context = options.kubeContext;
  if (typeof options.kubeNamespace === 'string') f.namespace = options.kubeNamespace;
  const global = words(options.extraKubectlArgs);
  for (let i = 0; i < global.length; i++) {
    const [flag, inline] = global[i].split(/=(.*)/s, 2);
    const value = (): string => {
      const v = inline ?? global[++i];
      if (v === undefined) throw usage(`--extra-kubectl-args ${flag} needs a value`, `write ${flag}=<value>`);
      return v;
    };
    // the dedicated flags win, but the value is consumed either way (`f.x ??= value()` would not
    // call value(), and the value's word would be read as the next flag)
    const key = Object.hasOwn(DEDICATED, flag) ? DEDICATED[flag] : undefined;
    if (key) {
      const v = value();
      f[key] ??= v;
    } else if (flag === '--request-timeout') f.requestTimeoutMs = duration(value());
    else if (flag === '--insecure-skip-tls-verify') f.insecure = inline === undefined || inline === 'true';
    else if (APPLY_ONLY.includes(flag)) {
      f.warnings.push(
        `--extra-kubectl-args ${global[i]}: an apply-only flag; pass it with --extra-kubectl-apply-args instead (ignored here)`,
      );
      if (inline === undefined && i + 1 < global.length && !global[i + 1].startsWith('-')) i++;
    } else {
      throw usage(
        `--extra-kubectl-args ${global[i]}: sflow talks to the API server through client-node, not kubectl, and cannot map this flag`,
        'supported: --context, --namespace, --kubeconfig, --request-timeout, --insecure-skip-tls-verify',
      );
    }
  }
  const apply = words(options.extraKubectlApplyArgs);
  for (let i = 0; i < apply.length; i++) {
    const [flag, inline] = apply[i].split(/=(.*)/s, 2);
    if (flag === '--validate') {
      const v = (inline ?? 'true').toLowerCase();
      f.fieldValidation = v === 'false' || v === 'ignore' ? 'Ignore' : v === 'warn' ? 'Warn' : 'Strict';
    } else if (flag === '--field-manager') {
      f.fieldManager = inline ?? apply[++i];
    } else if (flag === '--server-side' || flag === '--force-conflicts') {
      f.warnings.push(
        `--extra-kubectl-apply-args ${apply[i]}: sflow creates its objects (POST) and never applies them, so there is nothing for it to change (ignored)`,
      );
    } else {
      throw usage(
        `--extra-kubectl-apply-args ${apply[i]}: cannot be mapped onto sflow's object creation`,
        'supported: --validate=strict|warn|ignore, --field-manager NAME (--server-side and --force-conflicts are accepted and ignored)',
      );
    }
  }
  return f;
}

/** Loads the kubeconfig the flags and the environment name, with the context selected. */
export function loadKubeTarget(
  namespace: string,
  options: KubeFlagOptions,
  env: NodeJS.ProcessEnv,
): KubeTarget & { flags: KubeFlags; source: string } {
  const flags = kubeFlags(options);
  const kc = new k8s.KubeConfig();
  const fromEnv = env.KUBECONFIG?.split(':').filter(Boolean) ?? [];
  const path = flags.kubeconfig ?? fromEnv[0] ?? join(homedir(), '.kube', 'config');
  const hint =
    'pass --kubeconfig <file> (or set KUBECONFIG); --kube-context picks a context of it. Credentials never come from the recipe';
  if (!existsSync(path)) {
    throw new SflowError('k8s.kubeconfig', `no kubeconfig at ${path}`, { phase: 'preflight', hint });
  }
  try {
    if (!flags.kubeconfig && fromEnv.length > 1) {
      kc.loadFromFile(fromEnv[0]);
      for (const extra of fromEnv.slice(1)) if (existsSync(extra)) kc.mergeConfig(loadOne(extra));
    } else kc.loadFromFile(path);
  } catch (e) {
    throw new SflowError('k8s.kubeconfig', `cannot read the kubeconfig ${path}: ${errorMessage(e)}`, {
      phase: 'preflight',
      hint,
    });
  }
  if (flags.context) {
    if (!kc.getContextObject(flags.context)) {
      throw new SflowError(
        'k8s.context',
        `kubeconfig ${path} has no context '${flags.context}' (contexts: ${
          kc
            .getContexts()
            .map((c) => c.name)
            .join(', ') || 'none'
        })`,
        { phase: 'preflight', hint: 'check --kube-context' },
      );
    }
    kc.setCurrentContext(flags.context);
  }
  if (!kc.getCurrentCluster()) {
    throw new SflowError('k8s.context', `kubeconfig ${path} has no current context with a cluster`, {
      phase: 'preflight',
      hint: 'pass --kube-context <name>',
    });
  }
  if (flags.insecure) {
    const cluster = kc.getCurrentCluster();
    if (cluster) (cluster as { skipTLSVerify: boolean }).skipTLSVerify = true;
  }
  return {
    kc,
    namespace: flags.namespace ?? namespace,
    flags,
    source: path,
    ...(flags.fieldValidation ? { fieldValidation: flags.fieldValidation } : {}),
    ...(flags.fieldManager ? { fieldManager: flags.fieldManager } : {}),
    ...(flags.requestTimeoutMs ? { readTimeoutMs: flags.requestTimeoutMs } : {}),
  };
}

function loadOne(file: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(file);
  return kc;
}
