import { describe, expect, it } from 'vitest';
import {
  applyDockerExtraArgs,
  mergeDockerArgs,
  parseDockerArgs,
} from '../../src/backends/docker/extra-args.js';
import type { Recipe } from '../../src/config/schema/index.js';

/** the loose backends of a test as the validated recipe's (only the fields the code reads) */
const asRecipe = (r: { backends: object[] }) => r as unknown as Pick<Recipe, 'backends'>;

describe('--extra-docker-args', () => {
  it('reads separate and = values as one option', () => {
    expect(parseDockerArgs(['--shm-size', '1g', '--ipc=host', '--privileged', '-v', '/a:/a'])).toEqual([
      { name: '--shm-size', parts: ['--shm-size', '1g'], value: '1g' },
      { name: '--ipc', parts: ['--ipc=host'], value: 'host' },
      { name: '--privileged', parts: ['--privileged'], value: undefined },
      { name: '-v', parts: ['-v', '/a:/a'], value: '/a:/a' },
    ]);
  });

  it('a single-use option of the CLI replaces the recipe one; repeatable ones add up; repeats are dropped', () => {
    const r = mergeDockerArgs(
      ['--network=host', '--shm-size', '1g', '-v', '/a:/a'],
      ['--shm-size=8g', '-v', '/b:/b', '-v', '/a:/a', '--network=host', '--ipc=host'],
    );
    expect(r.args).toEqual(['--network=host', '-v', '/a:/a', '--shm-size=8g', '-v', '/b:/b', '--ipc=host']);
    expect(r.notes).toEqual([
      '--shm-size=8g replaces --shm-size 1g',
      '-v /a:/a is already there; not added twice',
      '--network=host is already there; not added twice',
    ]);
  });

  it('goes into every docker backend; a recipe without one gets a warning', () => {
    const recipe = {
      backends: [
        { name: 'd1', type: 'docker', extra_args: ['--ipc=private'] },
        { name: 'd2', type: 'docker' },
        { name: 'l', type: 'local' },
      ],
    };
    expect(applyDockerExtraArgs(asRecipe(recipe), ['--ipc=host'])).toEqual([
      "--extra-docker-args: backend 'd1': --ipc=host replaces --ipc=private",
    ]);
    expect(recipe.backends.map((b) => (b as { extra_args?: string[] }).extra_args)).toEqual([
      ['--ipc=host'],
      ['--ipc=host'],
      undefined,
    ]);
    expect(
      applyDockerExtraArgs(asRecipe({ backends: [{ name: 'l', type: 'local' }] }), ['--ipc=host']),
    ).toEqual(['--extra-docker-args --ipc=host: the recipe has no docker backend; nothing to add them to']);
    expect(applyDockerExtraArgs(asRecipe({ backends: [] }), [])).toEqual([]);
  });
});
