import { describe, expect, it } from 'vitest';
import type { WorkflowEvent } from '../../../src/domain/events.js';
import { createInProcessEventBus } from '../../../src/inproc/event-bus.js';
import { EVENTS_CHANNEL, eventNotices } from '../../../src/store/postgres/group-commit.js';
import { createSharedEventBus } from '../../../src/store/postgres/shared-event-bus.js';
import type { Wakeups } from '../../../src/store/postgres/wakeups.js';

/**
 * The event fan-out between instances (docs/operations.md#scale-out), over a journal in memory and
 * wake-ups delivered by hand: a watched workflow's events reach its listeners once each, in seq
 * order, whichever instance committed them and in whatever order the notices and this instance's
 * own commits arrive.
 */
const event = (seq: number, workflowId = 'wf_a'): WorkflowEvent =>
  ({ workflowId, tenantId: 't', seq, nodeId: null, at: seq, type: 'stepStart', payload: {} }) as WorkflowEvent;

function harness() {
  const journal: WorkflowEvent[] = [];
  const handlers = new Map<string, (payload: string) => void>();
  const wakeups: Wakeups = {
    async subscribe(channel, handler) {
      handlers.set(channel, handler);
      return () => handlers.delete(channel);
    },
    async notify() {},
    async close() {},
  };
  const reads: Array<{ after: number }> = [];
  const errors: unknown[] = [];
  const bus = createSharedEventBus({
    local: createInProcessEventBus(),
    wakeups,
    self: 'in_here',
    async events(workflowId, after, limit) {
      reads.push({ after });
      return journal.filter((e) => e.workflowId === workflowId && e.seq > after).slice(0, limit);
    },
    onError: (err) => errors.push(err),
  });
  /** Another instance committed these: they are in the journal and announced. */
  const remoteCommit = (...events: WorkflowEvent[]) => {
    journal.push(...events);
    handlers.get(EVENTS_CHANNEL)?.(eventNotices([{ events }], 'in_there')[0] as string);
  };
  /** This instance committed these: in the journal, then published. */
  const localCommit = (...events: WorkflowEvent[]) => {
    journal.push(...events);
    bus.publish(events);
  };
  const notice = (payload: string) => handlers.get(EVENTS_CHANNEL)?.(payload);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 5));
  return { bus, journal, reads, errors, remoteCommit, localCommit, notice, settle };
}

describe('the shared event bus', () => {
  it('reads what another instance committed, from where the subscriber stands', async () => {
    const h = harness();
    h.journal.push(event(1), event(2));
    const seen: number[] = [];
    h.bus.subscribe('wf_a', (e) => seen.push(e.seq), 2);
    h.remoteCommit(event(3), event(4));
    await h.settle();
    expect(seen).toEqual([3, 4]);
    expect(h.reads).toEqual([{ after: 2 }]);
  });

  it('fills the gap before this instance’s own events when another instance’s notice is late', async () => {
    const h = harness();
    const seen: number[] = [];
    h.bus.subscribe('wf_a', (e) => seen.push(e.seq), 0);
    // Instance A committed 1–3, its notice not here yet; this instance took the run over and commits 4.
    h.journal.push(event(1), event(2), event(3));
    h.localCommit(event(4));
    // A's notice arrives after all.
    h.remoteCommit();
    h.bus.publish([]);
    await h.settle();
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it('delivers each event once when a commit is both published here and announced', async () => {
    const h = harness();
    const seen: number[] = [];
    h.bus.subscribe('wf_a', (e) => seen.push(e.seq), 0);
    h.localCommit(event(1), event(2));
    h.remoteCommit(); // no events
    // The notice of this instance's own commit comes back over LISTEN too.
    await h.settle();
    h.journal.splice(0);
    h.remoteCommit(event(1), event(2));
    h.localCommit(event(3));
    await h.settle();
    expect(seen).toEqual([1, 2, 3]);
  });

  it('reads again after the listening connection came back', async () => {
    const h = harness();
    const seen: number[] = [];
    h.bus.subscribe('wf_a', (e) => seen.push(e.seq), 0);
    // Committed elsewhere while the connection was down: no notice ever arrives.
    h.journal.push(event(1), event(2));
    h.bus.resync();
    await h.settle();
    expect(seen).toEqual([1, 2]);
  });

  it('ignores workflows nobody here watches, and notices it cannot read', async () => {
    const h = harness();
    h.remoteCommit(event(1, 'wf_other'));
    const seen: number[] = [];
    h.bus.subscribe('wf_a', (e) => seen.push(e.seq), 0);
    // A notice is only a hint: garbage is dropped, nothing is read for it.
    for (const payload of ['', 'not json', '{"a":1}', '[["wf_a",5]]', '{"e":[["wf_a","x"]]}', '{"e":[["wf_a",0]]}'])
      h.notice(payload);
    // This instance's own notices: it published those events itself.
    h.journal.push(event(1));
    h.notice(eventNotices([{ events: [event(1)] }], 'in_here')[0] as string);
    await h.settle();
    expect(h.reads).toEqual([]);
    expect(seen).toEqual([]);
    expect(h.errors).toEqual([]);
  });

  it('splits notices of many workflows under PostgreSQL’s payload limit', () => {
    const events = Array.from({ length: 2000 }, (_, i) => event(7, `wf_${String(i).padStart(30, '0')}`));
    const payloads = eventNotices([{ events }], 'in_here');
    expect(payloads.length).toBeGreaterThan(1);
    for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(8000);
    const listed = payloads.flatMap((p) => (JSON.parse(p) as { e: Array<[string, number]> }).e);
    expect(listed).toHaveLength(2000);
    expect(new Set(listed.map(([id]) => id)).size).toBe(2000);
  });
});
