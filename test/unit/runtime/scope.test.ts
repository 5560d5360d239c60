import { afterEach, describe, expect, it, vi } from 'vitest';
import { Scope, ScopeCancelled, type CancelCause } from '../../../src/runtime/scope.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('Scope', () => {
  it('the first cancel records its cause, aborts the signal with it and tells the listeners once', () => {
    const s = Scope.root('run');
    const seen: CancelCause[] = [];
    s.onCancel((c) => seen.push(c));
    expect(s.cancel({ kind: 'deadline', reason: 'too late' })).toBe(true);
    expect(s.signal.aborted).toBe(true);
    const reason: unknown = s.signal.reason;
    expect(reason).toBeInstanceOf(ScopeCancelled);
    expect((reason as ScopeCancelled).code).toBe('run.deadline');
    expect((reason as ScopeCancelled).message).toBe('too late');
    expect(s.cancel({ kind: 'fail_fast', reason: 'x failed' })).toBe(false);
    expect(s.cause).toEqual({ kind: 'deadline', reason: 'too late' });
    expect(seen).toEqual([{ kind: 'deadline', reason: 'too late' }]);
    expect(s.requests).toBe(2);
    // a cancel that is not a signal never forces
    expect(s.forced.aborted).toBe(false);
  });

  it('a signal after the first cancel forces, every time it comes', () => {
    const s = Scope.root('run');
    const forced: CancelCause[] = [];
    s.onForce((c) => forced.push(c));
    s.cancel({ kind: 'signal', signal: 'SIGINT' });
    expect((s.signal.reason as ScopeCancelled).message).toBe('interrupted by SIGINT');
    expect(s.forced.aborted).toBe(false);
    s.cancel({ kind: 'signal', signal: 'SIGTERM' });
    s.cancel({ kind: 'signal', signal: 'SIGINT' });
    expect(s.forced.aborted).toBe(true);
    expect(forced).toEqual([
      { kind: 'signal', signal: 'SIGTERM' },
      { kind: 'signal', signal: 'SIGINT' },
    ]);
    expect(s.cause).toEqual({ kind: 'signal', signal: 'SIGINT' });
  });

  it('an ended scope is not cancelled any more, but a signal still forces it', () => {
    const s = Scope.root('run');
    const cancelled: CancelCause[] = [];
    s.onCancel((c) => cancelled.push(c));
    expect(s.end()).toBe(true);
    expect(s.end()).toBe(false);
    expect(s.cancel({ kind: 'deadline', reason: 'late' })).toBe(false);
    expect(s.signal.aborted).toBe(false);
    expect(s.forced.aborted).toBe(false);
    s.cancel({ kind: 'signal', signal: 'SIGINT' });
    expect(s.forced.aborted).toBe(true);
    expect(s.cause).toEqual({ kind: 'end' });
    expect(cancelled).toEqual([]);
  });

  it('a listener added after the cancel (or the force) is called at once', () => {
    const s = Scope.root('run');
    s.cancel({ kind: 'fail_fast', reason: 'a failed' });
    const late: string[] = [];
    s.onCancel((c) => late.push(c.kind));
    expect(late).toEqual(['fail_fast']);
    s.force();
    s.onForce((c) => late.push(`forced:${c.kind}`));
    expect(late).toEqual(['fail_fast', 'forced:fail_fast']);
  });

  it('a late force listener hears the cause of the first force, not a later request', () => {
    const s = Scope.root('run');
    s.force({ kind: 'bound', reason: 'release took too long' });
    s.cancel({ kind: 'deadline', reason: 'late' });
    const late: CancelCause[] = [];
    s.onForce((c) => late.push(c));
    expect(late).toEqual([{ kind: 'bound', reason: 'release took too long' }]);
    expect(s.forced.reason).toEqual({ kind: 'bound', reason: 'release took too long' });
  });

  it('a removed listener is not called', () => {
    const s = Scope.root('run');
    const seen: string[] = [];
    const off = s.onCancel((c) => seen.push(c.kind));
    off();
    s.cancel({ kind: 'signal', signal: 'SIGINT' });
    expect(seen).toEqual([]);
  });

  it('its deadline cancels it and says it fired; a deadline after the end changes nothing', () => {
    vi.useFakeTimers();
    const a = Scope.root('a');
    const fired: string[] = [];
    a.deadline(
      1_000,
      () => ({ kind: 'deadline', reason: 'a late' }),
      () => fired.push('a'),
    );
    vi.advanceTimersByTime(999);
    expect(a.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(a.cause).toEqual({ kind: 'deadline', reason: 'a late' });
    const b = Scope.root('b');
    b.deadline(
      1_000,
      () => ({ kind: 'deadline', reason: 'b late' }),
      () => fired.push('b'),
    );
    b.end();
    vi.advanceTimersByTime(2_000);
    expect(b.cause).toEqual({ kind: 'end' });
    const c = Scope.root('c');
    c.deadline(
      0,
      () => ({ kind: 'deadline', reason: 'never' }),
      () => fired.push('c'),
    );
    c.deadline(
      undefined,
      () => ({ kind: 'deadline', reason: 'never' }),
      () => fired.push('c'),
    );
    vi.advanceTimersByTime(10_000);
    expect(c.cause).toBeUndefined();
    expect(fired).toEqual(['a']);
  });

  it('a deadline longer than one timer can wait is reached in steps; dispose stops it', () => {
    vi.useFakeTimers();
    const s = Scope.root('long');
    const ms = 2_147_483_647 + 5_000;
    s.deadline(ms, () => ({ kind: 'deadline', reason: 'late' }));
    vi.advanceTimersByTime(2_147_483_647);
    expect(s.signal.aborted).toBe(false);
    vi.advanceTimersByTime(5_000);
    expect(s.signal.aborted).toBe(true);
    const d = Scope.root('disposed');
    d.deadline(1_000, () => ({ kind: 'deadline', reason: 'late' }));
    d.dispose();
    vi.advanceTimersByTime(5_000);
    expect(d.signal.aborted).toBe(false);
  });

  it('a shielded scope is not cancelled with its parent, is bounded, and is forced with it', () => {
    vi.useFakeTimers();
    const run = Scope.root('run');
    run.cancel({ kind: 'signal', signal: 'SIGINT' });
    const t = run.shield('teardown', 10_000, 'took too long');
    expect(t.signal.aborted).toBe(false);
    vi.advanceTimersByTime(10_000);
    expect(t.cause).toEqual({ kind: 'bound', reason: 'took too long' });
    expect((t.signal.reason as ScopeCancelled).code).toBe('run.bound');

    const u = run.shield('release', 10_000, 'took too long');
    run.cancel({ kind: 'signal', signal: 'SIGTERM' }); // the second signal
    expect(u.signal.aborted).toBe(true);
    expect(u.forced.aborted).toBe(true);
    expect(u.cause).toEqual({ kind: 'signal', signal: 'SIGTERM' });

    const v = run.shield('after', 10_000, 'took too long');
    v.dispose(); // detached from the parent, its bound cleared
    expect(v.signal.aborted).toBe(true); // the parent was already forced when it was made
    const w = Scope.root('other').shield('w', 10_000, 'bound');
    w.dispose();
    vi.advanceTimersByTime(20_000);
    expect(w.signal.aborted).toBe(false);
  });
});
