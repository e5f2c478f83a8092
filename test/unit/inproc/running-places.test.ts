import { describe, expect, it } from 'vitest';
import type { RunningPlace } from '../../../src/domain/ports.js';
import { createInProcessWorkQueue } from '../../../src/inproc/work-queue.js';

/** Lets pending promise callbacks (grants, queue pumping) run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A handler that keeps each root's place until the test ends it. */
function roots() {
  const places = new Map<string, RunningPlace>();
  const ends = new Map<string, () => void>();
  const handler = (id: string, place: RunningPlace) =>
    new Promise<void>((resolve) => {
      places.set(id, place);
      ends.set(id, resolve);
    });
  return { handler, places, started: () => [...places.keys()], end: (id: string) => ends.get(id)?.() };
}

describe('running places (children and waiting parents under the caps)', () => {
  it('a child waits for its tenant to have room, and a freed place goes to it before a waiting root', async () => {
    const queue = createInProcessWorkQueue({ concurrency: 4, perTenant: 2 });
    const r = roots();
    queue.start(r.handler);
    for (const id of ['a0', 'a1', 'a2']) queue.enqueue(id, 'a');
    await settle();
    expect(r.started()).toEqual(['a0', 'a1']);
    let child: RunningPlace | undefined;
    void queue.place('a', new AbortController().signal).then((p) => {
      child = p;
    });
    await settle();
    expect(child).toBeUndefined();
    expect(queue.placesHeld('a')).toBe(2);
    // a0 only waits on its children now: its place goes to the child, not to root a2.
    r.places.get('a0')?.release();
    await settle();
    expect(child?.held).toBe(true);
    expect(r.started()).toEqual(['a0', 'a1']);
    expect(queue.placesHeld('a')).toBe(2);
    // The parent retakes a place ahead of a2 once the child gives its own back.
    const retaken = r.places.get('a0')?.retake(new AbortController().signal);
    child?.release();
    await retaken;
    expect(r.places.get('a0')?.held).toBe(true);
    expect(r.started()).toEqual(['a0', 'a1']);
    r.end('a0');
    await settle();
    expect(r.started()).toEqual(['a0', 'a1', 'a2']);
    expect(queue.placesHeld()).toBe(2);
  });

  it('the global cap binds children of every tenant', async () => {
    const queue = createInProcessWorkQueue({ concurrency: 2, perTenant: 2 });
    const r = roots();
    queue.start(r.handler);
    queue.enqueue('a0', 'a');
    queue.enqueue('b0', 'b');
    await settle();
    const granted: string[] = [];
    const ask = (tenant: string) =>
      void queue.place(tenant, new AbortController().signal).then(() => granted.push(tenant));
    ask('a');
    ask('b');
    await settle();
    // Both tenants have room of their own, but the process is full.
    expect(granted).toEqual([]);
    r.places.get('a0')?.release();
    await settle();
    expect(granted).toEqual(['a']);
    r.end('b0');
    await settle();
    expect(granted).toEqual(['a', 'b']);
    expect(queue.placesHeld()).toBe(2);
  });

  it('a waiter whose signal aborts leaves the line and its place goes to the next', async () => {
    const queue = createInProcessWorkQueue({ concurrency: 1 });
    const r = roots();
    queue.start(r.handler);
    queue.enqueue('a0', 'a');
    await settle();
    const gone = new AbortController();
    const first = queue.place('a', gone.signal);
    let second: RunningPlace | undefined;
    void queue.place('a', new AbortController().signal).then((p) => {
      second = p;
    });
    gone.abort(new Error('cancelled'));
    await expect(first).rejects.toThrow('cancelled');
    r.places.get('a0')?.release();
    await settle();
    expect(second?.held).toBe(true);
    expect(queue.placesHeld()).toBe(1);
    // Releasing twice gives back one place, once.
    second?.release();
    second?.release();
    expect(queue.placesHeld()).toBe(0);
  });
});
