import { describe, expect, it } from 'vitest';
import type { WorkflowEvent } from '../../../src/domain/events.js';
import { createInProcessEventBus } from '../../../src/inproc/event-bus.js';

function event(workflowId: string, seq: number): WorkflowEvent {
  return {
    workflowId,
    tenantId: 't',
    seq,
    type: 'stepStart',
    nodeId: null,
    at: 0,
    payload: { node: 'n', type: 'prompt', attempt: 1 },
  };
}

describe('createInProcessEventBus', () => {
  it('delivers events only to subscribers of their workflow, in order', () => {
    const bus = createInProcessEventBus();
    const seenA: number[] = [];
    const seenB: number[] = [];
    bus.subscribe('wf_a', (e) => seenA.push(e.seq));
    bus.subscribe('wf_b', (e) => seenB.push(e.seq));

    bus.publish([event('wf_a', 1), event('wf_b', 1), event('wf_a', 2)]);

    expect(seenA).toEqual([1, 2]);
    expect(seenB).toEqual([1]);
  });

  it('stops delivering after unsubscribe, and unsubscribing twice is harmless', () => {
    const bus = createInProcessEventBus();
    const seen: number[] = [];
    const unsubscribe = bus.subscribe('wf_a', (e) => seen.push(e.seq));
    bus.publish([event('wf_a', 1)]);
    unsubscribe();
    unsubscribe();
    bus.publish([event('wf_a', 2)]);
    expect(seen).toEqual([1]);
  });

  it('isolates a throwing listener from the others and from the publisher', () => {
    const bus = createInProcessEventBus();
    const seen: string[] = [];
    bus.subscribe('wf_a', () => {
      throw new Error('socket closed');
    });
    bus.subscribe('wf_a', (e) => seen.push(`second:${e.seq}`));

    expect(() => bus.publish([event('wf_a', 1), event('wf_a', 2)])).not.toThrow();
    expect(seen).toEqual(['second:1', 'second:2']);
  });

  it('lets a listener unsubscribe itself while events are being delivered', () => {
    const bus = createInProcessEventBus();
    const seen: number[] = [];
    const unsubscribe = bus.subscribe('wf_a', (e) => {
      seen.push(e.seq);
      unsubscribe();
    });
    const others: number[] = [];
    bus.subscribe('wf_a', (e) => others.push(e.seq));

    bus.publish([event('wf_a', 1), event('wf_a', 2)]);
    expect(seen).toEqual([1]);
    expect(others).toEqual([1, 2]);
  });

  it('subscribeAll sees every workflow in publish order, isolated from throwing listeners, until unsubscribed', () => {
    const bus = createInProcessEventBus();
    const all: string[] = [];
    const perWorkflow: number[] = [];
    bus.subscribeAll(() => {
      throw new Error('broken exporter');
    });
    const unsubscribe = bus.subscribeAll((e) => all.push(`${e.workflowId}:${e.seq}`));
    bus.subscribe('wf_a', (e) => perWorkflow.push(e.seq));

    expect(() => bus.publish([event('wf_a', 1), event('wf_b', 1), event('wf_a', 2)])).not.toThrow();
    expect(all).toEqual(['wf_a:1', 'wf_b:1', 'wf_a:2']);
    expect(perWorkflow).toEqual([1, 2]);

    unsubscribe();
    unsubscribe();
    bus.publish([event('wf_b', 2)]);
    expect(all).toHaveLength(3);
  });

  it('subscribing the same function to all events twice gives two independent subscriptions', () => {
    const bus = createInProcessEventBus();
    const seen: number[] = [];
    const listener = (e: WorkflowEvent) => seen.push(e.seq);
    const first = bus.subscribeAll(listener);
    bus.subscribeAll(listener);
    bus.publish([event('wf_a', 1)]);
    first();
    bus.publish([event('wf_a', 2)]);
    expect(seen).toEqual([1, 1, 2]);
  });

  it('publishing with no subscribers is a no-op', () => {
    const bus = createInProcessEventBus();
    expect(() => bus.publish([event('wf_x', 1)])).not.toThrow();
  });
});
