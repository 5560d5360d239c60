import { describe, expect, it } from 'vitest';
import { EngineOutages } from '../../src/backends/docker/outages.js';

describe('EngineOutages', () => {
  it('notes one outage per run of failures, closed by the first answer, and finds it by time', () => {
    const o = new EngineOutages();
    o.failed('h', 'Cannot connect to the Docker daemon\nmore', 1_000);
    o.failed('h', 'again', 2_000); // the same outage
    o.answered('h', 9_000);
    expect(o.since('h', 500)).toBe('no answer for 8 s: Cannot connect to the Docker daemon');
    expect(o.since('h', 9_500)).toBeUndefined(); // over before the attempt began
    expect(o.since(undefined, 0)).toBeUndefined(); // another endpoint
    o.failed('h', 'down', 10_000);
    expect(o.since('h', 9_500)).toMatch(/^not answering for \d+ s: down$/);
  });
});
