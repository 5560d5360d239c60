/**
 * The container CLI program (`SFLOW_DOCKER_CLI`, e.g. podman) flows from the controller's
 * environment through the plan into the `docker_run` command line the dry-run prints and the
 * container part the backends stop and remove with: one program everywhere, `docker` by default.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliProgram } from '../../../src/backends/container-engine.js';
import { taskContainer } from '../../../src/backends/local/containers.js';
import { backendCatalog } from '../../../src/backends/registry.js';
import { loadRecipe } from '../../../src/config/load.js';
import { containerCli } from '../../../src/operators/docker-run.js';
import { buildPlan } from '../../../src/plan/build.js';
import { renderDryRun } from '../../../src/plan/render.js';
import { scratchDir } from '../../helpers/scratch.js';

const dir = scratchDir('sflow-container-cli-');
let n = 0;

const recipe = (backendType: 'docker' | 'local') =>
  [
    'version: "0.1"',
    'backends:',
    `  - {name: b, type: ${backendType}, default: true}`,
    'operators:',
    '  - {name: box, type: docker_run, image: "img:1"}',
    'workflow:',
    '  name: cli',
    '  tasks:',
    '    - name: t',
    '      operator: box',
    '      script: ["echo hi"]',
    '',
  ].join('\n');

function planned(backendType: 'docker' | 'local', env: NodeJS.ProcessEnv) {
  const file = join(dir, `r${++n}.yaml`);
  writeFileSync(file, recipe(backendType));
  const loaded = loadRecipe({ files: [file] });
  const plan = buildPlan(loaded, {
    dryRun: true,
    runId: 'run-1',
    workspaceDir: dir,
    catalog: backendCatalog,
    env,
  });
  return { plan, text: renderDryRun(plan, loaded) };
}

describe('container CLI program', () => {
  it('SFLOW_DOCKER_CLI names it (trimmed); unset or blank: docker; the engine calls read the same rule', () => {
    expect(containerCli({})).toBe('docker');
    expect(containerCli({ SFLOW_DOCKER_CLI: '' })).toBe('docker');
    expect(containerCli({ SFLOW_DOCKER_CLI: '  ' })).toBe('docker');
    expect(containerCli({ SFLOW_DOCKER_CLI: ' podman ' })).toBe('podman');
    expect(cliProgram({ SFLOW_DOCKER_CLI: '/opt/bin/podman' })).toBe('/opt/bin/podman');
  });

  for (const type of ['docker', 'local'] as const)
    it(`${type} backend: the planned command line and its container part name the configured program`, () => {
      const { plan, text } = planned(type, { SFLOW_DOCKER_CLI: 'podman' });
      const [spec] = plan.tasks[0].launch;
      expect(spec.argv[0]).toBe('podman');
      expect(spec.argv[1]).toBe('run');
      expect(spec.container?.program).toBe('podman');
      expect(text).toMatch(/^\s*command: podman run .*--name sflow-p\d+-t-/m); // what --dry-run prints
      expect(text).not.toMatch(/\bdocker run\b/);

      const plain = planned(type, {});
      expect(plain.plan.tasks[0].launch[0].argv[0]).toBe('docker');
      expect(plain.plan.tasks[0].launch[0].container?.program).toBe('docker');
      expect(plain.text).toMatch(/^\s*command: docker run /m);
    });

  it('local backend: the engine that stops and removes a docker_run container is the planned program, not the environment of the task', () => {
    const { plan } = planned('local', { SFLOW_DOCKER_CLI: 'podman' });
    const c = taskContainer(plan.tasks[0].launch[0].container, { SFLOW_DOCKER_CLI: 'docker' });
    expect(c?.engine.program).toBe('podman');
    expect(c?.name).toBe(plan.tasks[0].launch[0].container?.name);
    // a container part without a program (an older plan) is docker's
    expect(taskContainer({ name: 'sflow-p1-t-x' }, { SFLOW_DOCKER_CLI: 'podman' })?.engine.program).toBe(
      'docker',
    );
    expect(taskContainer(undefined, {})).toBeUndefined();
  });
});
