/**
 * artifacts-batch.md A2–A5 on the plan and the preflight: every row of the A3 path-rules table
 * (escape cases included), the other schemes' paths, exposure (env + `${{ artifacts.X.path }}`),
 * and which paths the preflight checks (A5 1–3) — in-process, on small recipes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { SflowError } from '../../../src/config/errors.js';
import { loadRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';
import { checkArtifactPaths, preflightPath } from '../../../src/preflight/artifacts.js';
import { backendCatalog } from '../../../src/backends/registry.js';
import { findNotYet } from '../../../src/plan/not-yet.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-art-rules-'));
const ws = join(dir, 'ws');
mkdirSync(ws);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function recipe(artifacts: string, extra = '', script = 'echo hi'): string {
  const f = join(dir, `r${n++}.yaml`);
  writeFileSync(
    f,
    `version: "0.1"\n${extra}artifacts:\n${artifacts}\nworkflow:\n  name: w\n  tasks:\n    - name: t\n      script:\n        - ${JSON.stringify(script)}\n`,
  );
  return f;
}

function plan(file: string, artifactOverrides: string[] = []) {
  const loaded = loadRecipe({ files: [file], artifacts: artifactOverrides });
  return buildPlan(loaded, {
    dryRun: false,
    runId: 'run1',
    workspaceDir: ws,
    outputDir: join(dir, 'out'),
    catalog: backendCatalog,
  });
}

const R = join(dir, 'out', 'run1');

function inline(uri: string) {
  return plan(recipe(`  - name: INLINE\n    uri: ${JSON.stringify(uri)}\n    content: "x"`));
}

function planFails(file: string): SflowError {
  try {
    plan(file);
  } catch (e) {
    expect(e).toBeInstanceOf(SflowError);
    return e as SflowError;
  }
  throw new Error('expected the plan to fail');
}

describe('A3: file:// with inline content (run dir R)', () => {
  it('file://artifacts/inline.txt → R/artifacts/inline.txt', () => {
    expect(inline('file://artifacts/inline.txt').artifacts[0].path).toBe(join(R, 'artifacts/inline.txt'));
  });
  it('file://a/../b.txt → R/b.txt', () => {
    expect(inline('file://a/../b.txt').artifacts[0].path).toBe(join(R, 'b.txt'));
  });
  it.each(['file://../x', 'file://../../x', 'file://a/../../x'])(
    '%s escapes R: located error naming the artifact and path',
    (uri) => {
      const f = recipe(`  - name: INLINE\n    uri: ${JSON.stringify(uri)}\n    content: "x"`);
      const e = planFails(f);
      expect(e.code).toBe('plan.artifact_escape');
      expect(e.message).toContain("Artifact 'INLINE'");
      expect(e.message).toContain(uri.slice('file://'.length));
      expect(e.location?.file).toBe(f);
      expect(e.location?.line).toBe(4); // the uri line
    },
  );
  it('file:///etc/sflow/x.conf → that absolute path (the rule does not apply)', () => {
    expect(inline('file:///etc/sflow/x.conf').artifacts[0].path).toBe('/etc/sflow/x.conf');
  });
});

describe('A3: fs:// and file:// without content', () => {
  const one = (uri: string) => plan(recipe(`  - name: A\n    uri: ${JSON.stringify(uri)}`)).artifacts[0];
  it('fs:///data/m → /data/m', () => expect(one('fs:///data/m').path).toBe('/data/m'));
  it('fs://./models/q → relative to the workspace dir', () =>
    expect(one('fs://./models/q').path).toBe(join(ws, 'models/q')));
  it('file://config.yaml → relative to the workspace dir', () =>
    expect(one('file://config.yaml').path).toBe(join(ws, 'config.yaml')));
  it('file://localhost/abs/path → /abs/path', () =>
    expect(one('file://localhost/abs/path').path).toBe('/abs/path'));
  it('percent-escapes are decoded', () => expect(one('fs:///data/my%20model').path).toBe('/data/my model'));
  it('fs://../outside is allowed (the escape rule is for inline content only)', () =>
    expect(one('fs://../outside').path).toBe(join(dir, 'outside')));
  it('file://../x without content is allowed too', () =>
    expect(one('file://../x').path).toBe(join(dir, 'x')));
});

describe('A2: other schemes', () => {
  const one = (uri: string) => plan(recipe(`  - name: A\n    uri: ${JSON.stringify(uri)}`)).artifacts[0];
  it('https:// → <workspace>/.sflow_cache/artifacts/http_<sha256(uri)[:16]>', () => {
    const uri = 'https://example.com/models/tiny.bin?x=1';
    const h = createHash('sha256').update(uri).digest('hex').slice(0, 16);
    expect(one(uri).path).toBe(join(ws, '.sflow_cache', 'artifacts', `http_${h}`));
  });
  it('s3:// keeps the URI as its path', () => expect(one('s3://bucket/key').path).toBe('s3://bucket/key'));
  it('docker:// → the image reference', () =>
    expect(one('docker://nvcr.io/nvidia/pytorch:24.05-py3').path).toBe('nvcr.io/nvidia/pytorch:24.05-py3'));
  it('hf:// → <workspace>/.sflow_cache/artifacts/hf_<sha256(type:repo@revision)[:16]>[/<path>]', () => {
    const h = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 16);
    const at = (key: string, ...rest: string[]) =>
      join(ws, '.sflow_cache', 'artifacts', `hf_${h(key)}`, ...rest);
    expect(one('hf://org/model').path).toBe(at('model:org/model@main'));
    expect(one('huggingface://org/model@v1/sub/config.json').path).toBe(
      at('model:org/model@v1', 'sub', 'config.json'),
    );
    expect(one('hf://datasets/org/data@refs%2Fpr%2F3/train.csv').path).toBe(
      at('dataset:org/data@refs/pr/3', 'train.csv'),
    );
    // one folder per repo and revision: two files of it share it
    expect(dirname(one('hf://org/model/a.json').path)).toBe(dirname(one('hf://org/model/b.json').path));
  });
  it.each([
    ['hf://model-without-namespace', 'does not name a repository'],
    ['hf://org/model@/x', 'has an empty revision'],
    ['hf://org/model/../etc/passwd', "may not contain '.' or '..'"],
    ['docker://-rm', 'does not name an image'],
  ])('%s is a located plan error: %s', (uri, says) => {
    expect(() => one(uri)).toThrow(says);
  });
  it('hf://, docker:// and s3:// are nothing the not-yet table refuses', () => {
    const file = recipe(
      `  - name: M\n    uri: hf://org/model\n  - name: IMG\n    uri: docker://nvcr.io/x:1\n  - name: OK\n    uri: s3://b/k`,
    );
    expect(findNotYet({ plan: plan(file), loaded: loadRecipe({ files: [file] }), options: {} })).toEqual([]);
  });
  it('content with fs:// is a configuration error', () => {
    expect(() => loadRecipe({ files: [recipe(`  - name: A\n    uri: fs:///x\n    content: "y"`)] })).toThrow(
      /inline content is only supported for 'file:\/\/' URIs/,
    );
  });
});

describe('A4: exposure', () => {
  it('env NAME = path in every task, ${{ artifacts.NAME.path/uri }} in scripts; a variable of the same name wins', () => {
    const p = plan(
      recipe(
        `  - name: MODEL\n    uri: fs:///data/m\n  - name: SAME\n    uri: fs:///data/s`,
        'variables:\n  SAME: from-variable\n',
        'echo ${{ artifacts.MODEL.path }} ${{ artifacts.MODEL.uri }}',
      ),
    );
    const t = p.tasks[0];
    expect(t.env.MODEL).toBe('/data/m');
    expect(t.env.SAME).toBe('from-variable');
    expect(t.script).toBe('echo /data/m fs:///data/m');
  });
  it('--artifact NAME=URI replaces the URI', () => {
    const f = recipe(`  - name: MODEL\n    uri: fs:///data/m`);
    expect(plan(f, ['MODEL=fs:///other']).tasks[0].env.MODEL).toBe('/other');
    expect(() => plan(f, ['NOPE=fs:///x'])).toThrow(/Artifact 'NOPE' specified in overrides is not defined/);
  });
});

describe('A5: preflight', () => {
  const literals = new Map([['MODEL', '/data/m']]);
  it('substitutes literal ${{ variables.X }} and checks fs:// / file:// only', () => {
    expect(preflightPath({ uri: 'fs://${{ variables.MODEL }}/w' }, literals, ws)).toEqual({
      scheme: 'fs',
      path: '/data/m/w',
    });
    expect(preflightPath({ uri: 'file://rel.txt' }, literals, ws)).toEqual({
      scheme: 'file',
      path: join(ws, 'rel.txt'),
    });
    expect(preflightPath({ uri: 'https://x/y' }, literals, ws)).toBeUndefined();
  });
  it('skips: other expressions, non-literal variables, shell variables, inline content', () => {
    expect(preflightPath({ uri: 'fs://${{ variables.OTHER }}' }, literals, ws)).toBeUndefined();
    expect(preflightPath({ uri: 'fs://${{ backends.b.nodes[0].name }}/x' }, literals, ws)).toBeUndefined();
    expect(preflightPath({ uri: 'fs:///scratch/$USER/m' }, literals, ws)).toBeUndefined();
    expect(preflightPath({ uri: 'fs:///scratch/{a}' }, literals, ws)).toBeUndefined();
    expect(preflightPath({ uri: 'file://x.txt', content: 'c' }, literals, ws)).toBeUndefined();
  });
  it('collects every missing fs:// path into one located error; file:// only warns', () => {
    const f = recipe(
      `  - name: A\n    uri: fs:///nope/a\n  - name: B\n    uri: fs:///nope/b\n  - name: C\n    uri: file:///nope/c`,
    );
    const loaded = loadRecipe({ files: [f] });
    try {
      checkArtifactPaths(loaded, ws, false);
      throw new Error('expected a failure');
    } catch (e) {
      const err = e as SflowError;
      expect(err.message).toBe(
        "Artifact path validation failed:\n  Artifact 'A' (fs://) path does not exist: /nope/a\n  Artifact 'B' (fs://) path does not exist: /nope/b",
      );
      expect(err.location?.line).toBe(4);
    }
    const warnings = checkArtifactPaths(loaded, ws, true);
    expect(warnings).toEqual([
      "Artifact 'A' (fs://) path does not exist: /nope/a (--skip-artifact-check: left alone, not created)",
      "Artifact 'B' (fs://) path does not exist: /nope/b (--skip-artifact-check: left alone, not created)",
      "Artifact 'C' (file://) path does not exist: /nope/c",
    ]);
  });
  it('a literal variable path that exists passes; one built from another expression is not checked', () => {
    mkdirSync(join(dir, 'model'), { recursive: true });
    const ok = recipe(
      `  - name: M\n    uri: fs://\${{ variables.MODEL }}`,
      `variables:\n  MODEL: ${join(dir, 'model')}\n`,
    );
    expect(checkArtifactPaths(loadRecipe({ files: [ok] }), ws, false)).toEqual([]);
    const indirect = recipe(
      `  - name: M\n    uri: fs://\${{ variables.MODEL }}`,
      `variables:\n  BASE: /nope\n  MODEL: "\${{ variables.BASE }}/m"\n`,
    );
    expect(checkArtifactPaths(loadRecipe({ files: [indirect] }), ws, false)).toEqual([]);
  });
});
