import { describe, expect, it } from 'vitest';
import { cliOptionBag } from '../../../src/util/cli-options.js';

describe('cliOptionBag', () => {
  it("keeps commander's shapes as they are and drops unset options", () => {
    const bag = cliOptionBag({
      kubeconfig: '/k/config',
      graceSeconds: 5,
      dryRun: true,
      tui: false,
      extraArgs: ['--x', '--y'],
      kubeContext: undefined,
      nothing: null,
    });
    expect(bag).toEqual({
      kubeconfig: '/k/config',
      graceSeconds: 5,
      dryRun: true,
      tui: false,
      extraArgs: ['--x', '--y'],
    });
    expect(Object.keys(bag)).not.toContain('kubeContext');
    expect(Object.keys(bag)).not.toContain('nothing');
  });

  it('keeps a value of another shape as its text, so a set option never reads as unset', () => {
    const when = new Date(0);
    const bag = cliOptionBag({ at: when, list: [1, 'two'] });
    expect(bag.at).toBe(String(when));
    expect(bag.list).toEqual(['1', 'two']);
  });
});
