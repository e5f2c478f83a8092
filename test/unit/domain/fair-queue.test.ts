import { describe, expect, it } from 'vitest';
import { createFairQueue } from '../../../src/domain/fair-queue.js';

describe('createFairQueue', () => {
  it('serves groups in turn, FIFO within each, and keeps the turn when a group runs dry', () => {
    const queue = createFairQueue<string>();
    for (const item of ['a1', 'a2', 'a3']) queue.push('a', item);
    queue.push('b', 'b1');
    queue.push('c', 'c1');
    queue.push('c', 'c2');
    const order: string[] = [];
    for (let item = queue.take(); item !== undefined; item = queue.take()) order.push(item);
    expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'c2', 'a3']);
    expect(queue.size).toBe(0);
  });

  it('starts after the group served last, even when it was served without waiting', () => {
    const queue = createFairQueue<string>();
    queue.served('a');
    queue.push('a', 'a1');
    queue.push('b', 'b1');
    expect(queue.take()).toBe('b1');
    expect(queue.take()).toBe('a1');
  });

  it('skips groups that are not eligible and removes waiting items', () => {
    const queue = createFairQueue<string>();
    queue.push('a', 'a1');
    queue.push('b', 'b1');
    queue.push('b', 'b2');
    expect(queue.take((group) => group !== 'a')).toBe('b1');
    expect(queue.remove('b', 'b2')).toBe(true);
    expect(queue.remove('b', 'b2')).toBe(false);
    expect(queue.take((group) => group !== 'a')).toBeUndefined();
    expect(queue.take()).toBe('a1');
  });
});
