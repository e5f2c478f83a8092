import { describe, expect, it } from 'vitest';
import { createSemaphore } from '../../../src/engine/semaphore.js';

describe('semaphore', () => {
  it('admits up to the limit and serves waiters FIFO', async () => {
    const sem = createSemaphore(2);
    const signal = new AbortController().signal;
    await sem.acquire(signal);
    await sem.acquire(signal);
    const order: number[] = [];
    const third = sem.acquire(signal).then(() => order.push(3));
    const fourth = sem.acquire(signal).then(() => order.push(4));
    expect(sem.waiting).toBe(2);
    sem.release();
    sem.release();
    await Promise.all([third, fourth]);
    expect(order).toEqual([3, 4]);
    expect(sem.active).toBe(2);
  });

  it('drops an aborted waiter with the signal reason', async () => {
    const sem = createSemaphore(1);
    await sem.acquire(new AbortController().signal);
    const controller = new AbortController();
    const waiting = sem.acquire(controller.signal);
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    expect(sem.waiting).toBe(0);
    sem.release();
    expect(sem.active).toBe(0);
  });
});
