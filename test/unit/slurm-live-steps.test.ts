import { describe, expect, it } from 'vitest';
import { matchSteps, type LiveAttempt } from '../../src/backends/slurm/live-steps.js';
import { parseSteps } from '../../src/backends/slurm/steps.js';
import { launchFailure, startTimeout } from '../../src/backends/slurm/step-start.js';

// what Slurm 22.05's `scontrol -o show step <job>` printed: one running step, one still pending
const SCONTROL = [
  'StepId=17.0 UserId=0 StartTime=2026-12-02T17:47:35 TimeLimit=UNLIMITED State=RUNNING Partition=debug NodeList=n1 Nodes=1 CPUs=2 Tasks=1 Name=sleep Network=(null) TRES=cpu=2,mem=0,node=1 ResvPorts=(null) CPUFreqReq=Default Dist=Cyclic SrunHost:Pid=vm:2130',
  'StepId=17.TDB UserId=0 StartTime=Unknown TimeLimit=UNLIMITED State=PENDING Partition=debug NodeList=n1 Nodes=1 CPUs=1 Tasks=1 Name=(null) Network=(null) TRES=(null) ResvPorts=(null) CPUFreqReq=Default Dist=Unknown SrunHost:Pid=vm:2201',
].join('\n');

const attempt = (pid: number): LiveAttempt =>
  ({ step: true, running: false, stopped: false, group: { pid } }) as unknown as LiveAttempt;

describe('Slurm steps', () => {
  it('a step waiting for resources (State=PENDING, id <job>.TDB) is not taken as started', () => {
    const [running, pending] = [attempt(2130), attempt(2201)];
    const named = matchSteps([running, pending], parseSteps(SCONTROL), 'vm');
    expect(named).toEqual([running]);
    expect(running.stepId).toBe('17.0');
    expect(pending.stepId).toBeUndefined();
    expect(pending.running).toBe(false);
  });

  it("srun's launch failures become the attempt's reason with a hint; other srun errors do not", () => {
    const tail =
      'srun: error: Task launch for StepId=1.0 failed on node n2: Communication connection failure\nsrun: error: Application launch failed: Communication connection failure\nsrun: Job step aborted\n';
    expect(launchFailure(tail)).toBe(
      'the Slurm step did not start: Task launch for StepId=1.0 failed on node n2: Communication connection failure — slurmd on n2 did not take the step: check `scontrol show node n2` and `sinfo -R` (a node whose slurmd is down is marked DOWN only after SlurmdTimeout)',
    );
    expect(launchFailure('srun: error: n1: task 0: Exited with exit code 3\n')).toBeUndefined();
    expect(
      startTimeout(
        5_000,
        'srun: Job 17 step creation temporarily disabled, retrying (Requested nodes are busy)\n',
      ),
    ).toMatch(
      /^the Slurm step did not start within 5 s \(SFLOW_SLURM_STEP_START_TIMEOUT\): srun: Job 17 step creation temporarily disabled, retrying \(Requested nodes are busy\) — /,
    );
  });
});
