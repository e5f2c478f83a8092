import { describe, expect, it } from 'vitest';
import { createSemaphore } from '../../../src/engine/run/semaphore.js';

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

describe('fairness across tenants', () => {
  it('a released slot goes to the next tenant in turn, FIFO within each tenant', async () => {
    const sem = createSemaphore(1);
    const signal = new AbortController().signal;
    await sem.acquire(signal, 'a');
    const order: string[] = [];
    const waits = ['a1', 'a2', 'a3'].map((name) => sem.acquire(signal, 'a').then(() => order.push(name)));
    waits.push(sem.acquire(signal, 'b').then(() => order.push('b1')));
    for (const group of ['a', 'b', 'a', 'a']) {
      sem.release(group);
      await Promise.resolve();
      await Promise.resolve();
    }
    await Promise.all(waits);
    expect(order).toEqual(['b1', 'a1', 'a2', 'a3']);
  });

  it('an aborted waiter leaves its line without disturbing the turn', async () => {
    const sem = createSemaphore(1);
    const signal = new AbortController().signal;
    await sem.acquire(signal, 'a');
    const gone = new AbortController();
    const order: string[] = [];
    const b = sem.acquire(gone.signal, 'b').catch(() => order.push('b aborted'));
    const c = sem.acquire(signal, 'c').then(() => order.push('c'));
    gone.abort(new Error('gave up'));
    await b;
    expect(sem.waiting).toBe(1);
    sem.release('a');
    await c;
    expect(order).toEqual(['b aborted', 'c']);
  });

  it('a slot a tenant got back stays with it while it waits and holds fewer than the others', async () => {
    // A's calls are long, B's short: a slot B frees goes to B's next call, not to A's turn,
    // else every slot B is handed drifts back to A's long calls and B's calls queue up.
    const sem = createSemaphore(2);
    const signal = new AbortController().signal;
    await sem.acquire(signal, 'a');
    await sem.acquire(signal, 'a');
    const order: string[] = [];
    const waits = ['a1', 'a2', 'a3', 'b1', 'b2', 'b3'].map((name) =>
      sem.acquire(signal, name.slice(0, 1)).then(() => order.push(name)),
    );
    const settle = async () => {
      for (let i = 0; i < 3; i++) await Promise.resolve();
    };
    sem.release('a'); // one of A's long calls ends
    await settle();
    sem.release('b'); // b1, short, ends
    await settle();
    sem.release('b'); // b2 ends
    await settle();
    expect(order).toEqual(['b1', 'b2', 'b3']);
    // With B's line empty A's waiters are served again.
    sem.release('b');
    sem.release('a');
    await settle();
    expect(order).toEqual(['b1', 'b2', 'b3', 'a1', 'a2']);
    sem.release('a');
    sem.release('a');
    await Promise.all(waits);
    expect(order.at(-1)).toBe('a3');
  });
});
