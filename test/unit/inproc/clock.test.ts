import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/inproc/clock.js';

describe('systemClock', () => {
  it('now() follows Date.now', () => {
    const before = Date.now();
    const now = systemClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it('sleep resolves after the delay', async () => {
    const started = performance.now();
    await systemClock.sleep(20);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
  });

  it('sleep rejects with the abort reason when the signal aborts first', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled');
    const sleeping = systemClock.sleep(10_000, controller.signal);
    setTimeout(() => controller.abort(reason), 5);
    const started = performance.now();
    await expect(sleeping).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('sleep rejects at once when the signal is already aborted', async () => {
    const reason = new Error('already');
    await expect(systemClock.sleep(10_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('removes its abort listener once the timer fires', async () => {
    const controller = new AbortController();
    let listeners = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
      listeners += 1;
      add(...args);
    }) as AbortSignal['addEventListener'];
    signal.removeEventListener = ((...args: Parameters<AbortSignal['removeEventListener']>) => {
      listeners -= 1;
      remove(...args);
    }) as AbortSignal['removeEventListener'];

    for (let i = 0; i < 5; i += 1) await systemClock.sleep(1, signal);
    expect(listeners).toBe(0);
    // Aborting afterwards touches no settled sleep.
    controller.abort(new Error('late'));
  });
});
