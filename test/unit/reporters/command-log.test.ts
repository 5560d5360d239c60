/** `<family>_cmds.log`: the family comes from the operator's registry entry (v0.3 names). */
import { describe, expect, it } from 'vitest';
import { OPERATORS } from '../../../src/operators/index.js';
import { commandFamily } from '../../../src/reporters/command-log.js';

describe('commandFamily', () => {
  it('keeps the v0.3 file names', () => {
    expect(
      ['bash', 'python', 'srun', 'docker_run', 'docker', 'ssh', 'k8s', 'k8s_mpi'].map(commandFamily),
    ).toEqual(['bash', 'python', 'slurm', 'docker', 'docker', 'ssh', 'backend', 'backend']);
  });

  it("reads the operator's entry; an operator nothing registered logs under backend", () => {
    for (const [type, o] of Object.entries(OPERATORS)) expect(commandFamily(type)).toBe(o.commandLog);
    expect(commandFamily('no_such_operator')).toBe('backend');
  });
});
