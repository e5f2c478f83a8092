import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/domain/errors.js';
import { deadlineOf, RunDeadlines } from '../../../src/engine/run/deadline.js';
import { createManualClock } from '../../support/manual-clock.js';

const timeout = (what: string) => () => new AppError('NODE_TIMEOUT', `${what} timed out`);

describe('RunDeadlines: one timer for every deadline of a run', () => {
  it('fires each deadline at its time, with one sleep armed for the earliest', async () => {
    const clock = createManualClock();
    const t0 = clock.now();
    const deadlines = new RunDeadlines(clock);
    const run = new AbortController();
    const workflow = deadlines.within(run.signal, 10_000, timeout('workflow'));
    const first = deadlines.within(workflow.signal, 1_000, timeout('first'));
    const second = deadlines.within(workflow.signal, 2_000, timeout('second'));
    // The later deadlines did not arm a timer of their own.
    expect(clock.pending.map((s) => s.dueAt - t0)).toEqual([1_000]);
    expect(deadlineOf(second.signal)).toBe(t0 + 2_000);

    await clock.advance(999);
    expect(first.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(first.signal.reason).toMatchObject({ code: 'NODE_TIMEOUT', message: 'first timed out' });
    expect(second.signal.aborted).toBe(false);
    expect(clock.pending.map((s) => s.dueAt - t0)).toEqual([2_000]);
    await clock.advance(1_000);
    expect(second.signal.reason).toMatchObject({ message: 'second timed out' });
    expect(workflow.signal.aborted).toBe(false);
    deadlines.close();
    expect(clock.pending).toEqual([]);
  });

  it('a disposed deadline never fires; an earlier one re-arms the timer; a parent abort passes down', async () => {
    const clock = createManualClock();
    const t0 = clock.now();
    const deadlines = new RunDeadlines(clock);
    const run = new AbortController();
    const slow = deadlines.within(run.signal, 5_000, timeout('slow'));
    slow.dispose();
    const fast = deadlines.within(run.signal, 100, timeout('fast'));
    expect(clock.pending.map((s) => s.dueAt - t0)).toEqual([100]);
    fast.dispose();
    // A wake-up that finds nothing due leaves nothing armed.
    await clock.advance(100);
    expect(clock.pending).toEqual([]);
    await clock.advance(5_000);
    expect(slow.signal.aborted).toBe(false);

    const child = deadlines.within(run.signal, 60_000, timeout('child'));
    const reason = new AppError('CANCELLED', 'cancelled');
    run.abort(reason);
    expect(child.signal.reason).toBe(reason);
    deadlines.close();
  });
});
