/**
 * The Kubernetes backend's command-line settings (src/backends/kubernetes/kube-options.ts):
 * --kubeconfig / --kube-context / --kube-namespace, and the kubectl pass-through flags mapped
 * onto client-node or refused with a usage error (exit 2).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SflowError } from '../../../src/config/errors.js';
import { kubeFlags, loadKubeTarget } from '../../../src/backends/kubernetes/kube-options.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-kube-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** a kubeconfig with two contexts (`one` current, `two`), each on its own cluster and namespace */
function kubeconfig(name: string, current = 'one'): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
current-context: ${current}
clusters:
  - name: c1
    cluster: { server: 'https://127.0.0.1:6443' }
  - name: c2
    cluster: { server: 'https://127.0.0.2:7443' }
users:
  - name: u
    user: { token: not-a-real-token }
contexts:
  - name: one
    context: { cluster: c1, user: u, namespace: ns-one }
  - name: two
    context: { cluster: c2, user: u, namespace: ns-two }
`,
  );
  return path;
}

function refusal(f: () => unknown): SflowError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    return e as SflowError;
  }
  throw new Error('expected a refusal');
}

describe('kubeFlags', () => {
  it('takes --kubeconfig, --kube-context and --kube-namespace as given', () => {
    expect(kubeFlags({ kubeconfig: '/k', kubeContext: 'two', kubeNamespace: 'team' })).toEqual({
      kubeconfig: '/k',
      context: 'two',
      namespace: 'team',
      warnings: [],
    });
    expect(kubeFlags({})).toEqual({ warnings: [] });
  });

  it('maps --extra-kubectl-args onto the client: spaced and inline values, several words per flag', () => {
    const f = kubeFlags({
      extraKubectlArgs: ['--context two -n team', '--request-timeout=1.5m', '--insecure-skip-tls-verify'],
    });
    expect(f).toEqual({
      context: 'two',
      namespace: 'team',
      requestTimeoutMs: 90_000,
      insecure: true,
      warnings: [],
    });
    expect(kubeFlags({ extraKubectlArgs: '--namespace=x --kubeconfig /k' })).toMatchObject({
      namespace: 'x',
      kubeconfig: '/k',
    });
    expect(kubeFlags({ extraKubectlArgs: '--insecure-skip-tls-verify=false' }).insecure).toBe(false);
    for (const [d, ms] of [
      ['250ms', 250],
      ['20s', 20_000],
      ['20', 20_000],
      ['2h', 7_200_000],
    ] as const)
      expect(kubeFlags({ extraKubectlArgs: `--request-timeout ${d}` }).requestTimeoutMs).toBe(ms);
  });

  it('the dedicated flags win over the same setting in --extra-kubectl-args', () => {
    const f = kubeFlags({
      kubeconfig: '/mine',
      kubeContext: 'one',
      kubeNamespace: 'mine',
      extraKubectlArgs: '--context two --namespace theirs --kubeconfig /theirs',
    });
    expect(f).toMatchObject({ kubeconfig: '/mine', context: 'one', namespace: 'mine' });
  });

  it('refuses kubectl flags it cannot map, a flag without its value and a bad duration (exit 2)', () => {
    const e = refusal(() => kubeFlags({ extraKubectlArgs: '--v=9' }));
    expect([e.code, e.exitCode]).toEqual(['k8s.cli_flag', 2]);
    expect(e.message).toMatch(/--extra-kubectl-args --v=9: .*client-node, not kubectl/);
    expect(e.hint).toMatch(/supported: --context, --namespace/);
    expect(refusal(() => kubeFlags({ extraKubectlArgs: '--context' })).message).toBe(
      '--extra-kubectl-args --context needs a value',
    );
    expect(refusal(() => kubeFlags({ extraKubectlArgs: '--request-timeout soon' })).message).toMatch(
      /--request-timeout soon: expected a duration/,
    );
  });

  it('an apply-only flag in --extra-kubectl-args is warned about and ignored, with its value', () => {
    const f = kubeFlags({ extraKubectlArgs: '--field-manager me --context two' });
    expect(f.context).toBe('two');
    expect(f.fieldManager).toBeUndefined();
    expect(f.warnings).toEqual([
      expect.stringMatching(/--field-manager: an apply-only flag; pass it with --extra-kubectl-apply-args/),
    ]);
  });

  it('maps --extra-kubectl-apply-args: --validate onto fieldValidation, --field-manager; warns on --server-side', () => {
    for (const [v, want] of [
      ['--validate', 'Strict'],
      ['--validate=true', 'Strict'],
      ['--validate=strict', 'Strict'],
      ['--validate=Warn', 'Warn'],
      ['--validate=ignore', 'Ignore'],
      ['--validate=false', 'Ignore'],
    ] as const)
      expect(kubeFlags({ extraKubectlApplyArgs: v }).fieldValidation, v).toBe(want);
    const f = kubeFlags({
      extraKubectlApplyArgs: ['--field-manager sflow-ci', '--server-side --force-conflicts'],
    });
    expect(f.fieldManager).toBe('sflow-ci');
    expect(f.warnings).toEqual([
      expect.stringMatching(/--server-side: sflow creates its objects \(POST\) and never applies them/),
      expect.stringMatching(/--force-conflicts: sflow creates its objects/),
    ]);
    expect(kubeFlags({ extraKubectlApplyArgs: '--field-manager=x' }).fieldManager).toBe('x');
  });

  it('refuses an apply flag it cannot map (exit 2)', () => {
    const e = refusal(() => kubeFlags({ extraKubectlApplyArgs: '--prune' }));
    expect([e.code, e.exitCode]).toEqual(['k8s.cli_flag', 2]);
    expect(e.message).toMatch(/--extra-kubectl-apply-args --prune: cannot be mapped/);
    expect(e.hint).toMatch(/--validate=strict\|warn\|ignore, --field-manager NAME/);
  });
});

describe('loadKubeTarget', () => {
  it('the kubeconfig of --kubeconfig, its current context, the recipe namespace unless --kube-namespace', () => {
    const path = kubeconfig('a.yaml');
    const t = loadKubeTarget('from-recipe', { kubeconfig: path }, {});
    expect(t.source).toBe(path);
    expect(t.kc.getCurrentContext()).toBe('one');
    expect(t.kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
    expect(t.namespace).toBe('from-recipe');
    expect(t.fieldValidation).toBeUndefined();
    const n = loadKubeTarget('from-recipe', { kubeconfig: path, kubeNamespace: 'team' }, {});
    expect(n.namespace).toBe('team');
  });

  it('--kube-context selects another context; one it lacks is refused naming the contexts', () => {
    const path = kubeconfig('b.yaml');
    const t = loadKubeTarget('ns', { kubeconfig: path, kubeContext: 'two' }, {});
    expect(t.kc.getCurrentContext()).toBe('two');
    expect(t.kc.getCurrentCluster()?.server).toBe('https://127.0.0.2:7443');
    const e = refusal(() => loadKubeTarget('ns', { kubeconfig: path, kubeContext: 'three' }, {}));
    expect(e.code).toBe('k8s.context');
    expect(e.message).toBe(`kubeconfig ${path} has no context 'three' (contexts: one, two)`);
  });

  it('KUBECONFIG is used without --kubeconfig; --kubeconfig wins over it; a missing file is refused', () => {
    const env = kubeconfig('env.yaml', 'two');
    const flag = kubeconfig('flag.yaml', 'one');
    expect(loadKubeTarget('ns', {}, { KUBECONFIG: env }).kc.getCurrentContext()).toBe('two');
    expect(loadKubeTarget('ns', { kubeconfig: flag }, { KUBECONFIG: env }).source).toBe(flag);
    const missing = join(dir, 'none.yaml');
    const e = refusal(() => loadKubeTarget('ns', { kubeconfig: missing }, {}));
    expect([e.code, e.message]).toEqual(['k8s.kubeconfig', `no kubeconfig at ${missing}`]);
    expect(e.hint).toMatch(/Credentials never come from the recipe/);
  });

  it('the mapped pass-through flags reach the target: timeout, validation, field manager, TLS check off', () => {
    const path = kubeconfig('c.yaml');
    const t = loadKubeTarget(
      'ns',
      {
        kubeconfig: path,
        extraKubectlArgs: '--context two --request-timeout 5s --insecure-skip-tls-verify',
        extraKubectlApplyArgs: '--validate=warn --field-manager me',
      },
      {},
    );
    expect(t.kc.getCurrentContext()).toBe('two');
    expect(t.readTimeoutMs).toBe(5000);
    expect(t.fieldValidation).toBe('Warn');
    expect(t.fieldManager).toBe('me');
    expect(t.kc.getCurrentCluster()?.skipTLSVerify).toBe(true);
  });
});
