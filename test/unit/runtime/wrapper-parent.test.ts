import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchWrapperParent } from '../../../src/runtime/signals.js';

afterEach(() => vi.useRealTimers());

describe('watchWrapperParent: a driver started by npm exec stops when its wrapper is gone', () => {
  it('calls onGone once when the parent changes (npm exec)', () => {
    vi.useFakeTimers();
    let parent = 4242;
    const onGone = vi.fn();
    const stop = watchWrapperParent(onGone, {
      env: { npm_command: 'exec' },
      ppid: () => parent,
      intervalMs: 100,
    });
    vi.advanceTimersByTime(350);
    expect(onGone).not.toHaveBeenCalled();
    parent = 1;
    vi.advanceTimersByTime(100);
    expect(onGone).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1000);
    expect(onGone).toHaveBeenCalledTimes(1);
    stop();
  });

  it('does not watch outside npm, when told not to, or once disposed', () => {
    vi.useFakeTimers();
    let parent = 4242;
    const onGone = vi.fn();
    const stops = [
      watchWrapperParent(onGone, { env: {}, ppid: () => parent }),
      watchWrapperParent(onGone, {
        env: { npm_command: 'exec', SFLOW_STOP_WITH_PARENT: '0' },
        ppid: () => parent,
      }),
    ];
    const disposed = watchWrapperParent(onGone, { env: { npm_command: 'run-script' }, ppid: () => parent });
    disposed();
    parent = 1;
    vi.advanceTimersByTime(5000);
    expect(onGone).not.toHaveBeenCalled();
    for (const s of stops) s();
    // any parent when asked for
    parent = 7;
    const any = watchWrapperParent(onGone, { env: { SFLOW_STOP_WITH_PARENT: '1' }, ppid: () => parent });
    parent = 1;
    vi.advanceTimersByTime(600);
    expect(onGone).toHaveBeenCalledTimes(1);
    any();
  });
});
