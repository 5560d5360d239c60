/**
 * Which engines a docker:// artifact must be present on (the endpoints of the plan's container
 * launches, each once), and the pull policy from SFLOW_DOCKER_PULL. The engine side (inspect,
 * pull, docker load) is tested on the real engines: test/engines/docker/image-artifacts.test.ts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planEngines, pullPolicy, stageDockerImages } from '../../../src/artifacts/docker-images.js';
import { backendCatalog } from '../../../src/backends/registry.js';
import { loadRecipe } from '../../../src/config/load.js';
import { buildPlan } from '../../../src/plan/build.js';
import { scratchDir } from '../../helpers/scratch.js';

const dir = scratchDir('sflow-docker-images-unit-');
let n = 0;
function plan(yaml: string) {
  const file = join(dir, `r${++n}.yaml`);
  writeFileSync(file, yaml);
  return buildPlan(loadRecipe({ files: [file] }), {
    dryRun: true,
    runId: 'r',
    workspaceDir: dir,
    catalog: backendCatalog,
  });
}

const ART = 'artifacts:\n  - name: IMG\n    uri: docker://img:1\n';

describe('docker:// engines and pull policy', () => {
  it('a pool: each host once, whatever the number of tasks and members; local docker_run: the default engine', () => {
    const pool = plan(
      `${ART}backends:\n  - name: p\n    type: docker\n    image: x\n    default: true\n    hosts:\n      - {name: a, address: ha}\n      - {name: b, context: cb, ip_address: 10.0.0.2}\n` +
        'workflow:\n  name: w\n  tasks:\n    - name: t1\n      resources: {nodes: {count: 2}}\n      script: [echo]\n    - name: t2\n      script: [echo]\n',
    );
    expect(
      planEngines(pool, {})
        .map((e) => e.endpoint)
        .sort(),
    ).toEqual(['context:cb', 'ssh://ha']);
    const local = plan(
      `${ART}operators:\n  - name: box\n    type: docker_run\n    image: x\n` +
        'workflow:\n  name: w\n  tasks:\n    - name: t\n      operator: box\n      script: [echo]\n    - name: plain\n      script: [echo]\n',
    );
    expect(planEngines(local, {})).toEqual([{ program: 'docker', endpoint: undefined }]);
  });

  it('no container anywhere: the reference is passed on with a note and no engine is asked', async () => {
    const p = plan(`${ART}workflow:\n  name: w\n  tasks:\n    - name: t\n      script: [echo]\n`);
    expect(planEngines(p, {})).toEqual([]);
    const said: string[] = [];
    await stageDockerImages(p, {
      say: (l) => said.push(l),
      env: { SFLOW_DOCKER_CLI: '/nonexistent/docker' },
    });
    expect(said).toEqual([
      expect.stringContaining("ℹ artifact 'IMG': no task of this run starts containers"),
    ]);
  });

  it('SFLOW_DOCKER_PULL: missing (default) or never; anything else is a usage error', () => {
    expect(pullPolicy({})).toBe('missing');
    expect(pullPolicy({ SFLOW_DOCKER_PULL: 'Never' })).toBe('never');
    expect(() => pullPolicy({ SFLOW_DOCKER_PULL: 'always' })).toThrow(
      "SFLOW_DOCKER_PULL='always' is not 'missing' or 'never'",
    );
  });

  it('an engine that cannot be asked is a problem named with the engine, not a pull', async () => {
    const p = plan(
      `${ART}operators:\n  - name: box\n    type: docker_run\n    image: x\n` +
        'workflow:\n  name: w\n  tasks:\n    - name: t\n      operator: box\n      script: [echo]\n',
    );
    const said: string[] = [];
    // no engine answers there (or no docker CLI at all): either way a problem, no pull
    const env = { ...process.env, DOCKER_HOST: `unix://${join(dir, 'no-engine.sock')}` };
    await expect(stageDockerImages(p, { say: (l) => said.push(l), env })).rejects.toThrow(
      "1 image problem(s):\n  artifact 'IMG': the local engine: cannot ask for img:1: ",
    );
    expect(said.filter((l) => l.includes('pulling'))).toEqual([]);
  });
});
