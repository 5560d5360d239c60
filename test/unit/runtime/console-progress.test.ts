/** A service that is slow to become READY gets progress lines on the console (every long wait shows progress). */
import { describe, expect, it } from 'vitest';
import { ConsoleReporter } from '../../../src/reporters/console.js';
import type { RunEvent } from '../../../src/events/events.js';

const T0 = 1_800_000_000_000;

function reporter(): { c: ConsoleReporter; text: () => string; tick: (ms: number) => Promise<void> } {
  const lines: string[] = [];
  const c = new ConsoleReporter({
    taskOutput: false,
    out: (s) => lines.push(s),
    err: (s) => lines.push(s),
    verdict: false,
  });
  const tick = async (ms: number): Promise<void> => {
    (c as unknown as { tick(now: number): void }).tick(T0 + ms);
    await new Promise((r) => setImmediate(r)); // console output is batched until the next turn
  };
  return { c, text: () => lines.join(''), tick };
}

const plan: RunEvent = {
  t: T0,
  type: 'run_plan',
  tasks: [
    {
      name: 'api',
      base: 'api',
      backend: 'local',
      dependsOn: [],
      service: true,
      probes: [{ role: 'readiness', kind: 'tcp_port', target: '127.0.0.1:18081' }],
      retries: null,
      nodes: ['localhost'],
      gpus: null,
      logPath: '/x/api/api.log',
      outputDir: '/x/api',
    },
  ],
  backends: [],
};

describe('console progress while a service waits for readiness', () => {
  it('prints after 10 s, then every 30 s, with the last check, and stops at READY', async () => {
    const { c, text, tick } = reporter();
    c.emit(plan);
    c.emit({ t: T0, type: 'task_started', task: 'api', attempt: 1 });
    c.emit({
      t: T0 + 1000,
      type: 'probe_result',
      task: 'api',
      role: 'readiness',
      kind: 'tcp_port',
      ok: false,
      detail: 'connection refused',
    });
    await tick(9_000);
    expect(text()).not.toContain('waiting for readiness');
    await tick(10_000);
    expect(text()).toContain('⏳ api waiting for readiness (10.0s) — last check: connection refused');
    await tick(20_000);
    expect(text().match(/waiting for readiness/g)).toHaveLength(1);
    await tick(40_000);
    expect(text().match(/waiting for readiness/g)).toHaveLength(2);
    c.emit({ t: T0 + 41_000, type: 'task_ready', task: 'api', attempt: 1, probe: 'tcp_port' });
    await tick(80_000);
    expect(text().match(/waiting for readiness/g)).toHaveLength(2);
    c.emit({ t: T0 + 90_000, type: 'run_finished', status: 'COMPLETED', exitCode: 0, message: 'ok' });
    await c.close();
  });
});
