import type { WorkflowEvent } from '../../domain/events.js';
import type { EventBus, EventListener } from '../../domain/ports.js';
import { EVENTS_CHANNEL } from './group-commit.js';
import type { Wakeups } from './wakeups.js';

export interface SharedEventBusOptions {
  /** This instance's own bus: what its runs commit, for `subscribeAll` (telemetry counts local commits only). */
  local: EventBus;
  wakeups: Wakeups;
  /** This instance: its own notices are skipped (it published those events itself, at once). */
  self: string;
  /** A workflow's committed events after `after`, by seq (WorkflowStore.events). */
  events(workflowId: string, after: number, limit: number): Promise<WorkflowEvent[]>;
  onError: (err: unknown, context: Record<string, unknown>) => void;
}

export interface SharedEventBus extends EventBus {
  /** Reads again what every watched workflow committed (the LISTEN connection was down meanwhile). */
  resync(): void;
}

const PAGE = 1000;

/** A workflow some stream on this instance watches: events up to `cursor` went to every listener. */
interface Feed {
  cursor: number;
  listeners: Set<EventListener>;
  /** Deliveries of the workflow, one after another: its events leave in seq order, never twice. */
  chain: Promise<void>;
  /** Deliveries queued on `chain` and not done. */
  queued: number;
}

/**
 * The event bus of an instance among several (docs/operations.md#scale-out). A workflow's events
 * are committed by whichever instance runs it; each group commit announces `(workflow, last seq)`
 * (group-commit.ts), and every instance feeds the streams open on it from the journal: a watched
 * workflow's events are delivered gap-free and in seq order, whoever committed them. Events this
 * instance committed go out at once; a gap before them (another instance's commits not announced
 * yet, or a lost notification) is read from the journal first. `subscribe`'s `after` is where the
 * first subscriber of a workflow starts, so nothing after it is missed.
 */
export function createSharedEventBus(options: SharedEventBusOptions): SharedEventBus {
  const { local, wakeups, self, events, onError } = options;
  const feeds = new Map<string, Feed>();

  const emit = (feed: Feed, batch: readonly WorkflowEvent[]) => {
    for (const event of batch) {
      if (event.seq <= feed.cursor) continue;
      feed.cursor = event.seq;
      for (const listener of [...feed.listeners]) {
        try {
          listener(event);
        } catch {
          // A broken subscriber (a closed socket) must not stop the others.
        }
      }
    }
  };

  /** Reads the journal until the feed reaches `upTo` (or the end). */
  const catchUp = async (workflowId: string, feed: Feed, upTo: number) => {
    while (feed.cursor < upTo && feeds.get(workflowId) === feed) {
      const page = await events(workflowId, feed.cursor, PAGE);
      emit(feed, page);
      if (page.length < PAGE) return;
    }
  };

  const later = (workflowId: string, feed: Feed, work: () => Promise<void>) => {
    feed.queued += 1;
    feed.chain = feed.chain
      .then(work)
      .catch((err) => onError(err, { workflowId }))
      .finally(() => {
        feed.queued -= 1;
      });
  };

  const onNotice = (payload: string) => {
    const notice = parseNotice(payload);
    if (notice.from === self) return;
    for (const [workflowId, seq] of notice.entries) {
      const feed = feeds.get(workflowId);
      if (feed && seq > feed.cursor) later(workflowId, feed, () => catchUp(workflowId, feed, seq));
    }
  };
  wakeups.subscribe(EVENTS_CHANNEL, onNotice).catch((err) => onError(err, {}));

  return {
    publish(batch) {
      local.publish(batch);
      if (feeds.size === 0) return;
      const byWorkflow = new Map<string, WorkflowEvent[]>();
      for (const event of batch) {
        if (!feeds.has(event.workflowId)) continue;
        const list = byWorkflow.get(event.workflowId);
        if (list) list.push(event);
        else byWorkflow.set(event.workflowId, [event]);
      }
      for (const [workflowId, list] of byWorkflow) {
        const feed = feeds.get(workflowId) as Feed;
        const first = (list[0] as WorkflowEvent).seq;
        if (first === feed.cursor + 1 && feed.queued === 0) {
          emit(feed, list);
          continue;
        }
        later(workflowId, feed, async () => {
          if (first > feed.cursor + 1) await catchUp(workflowId, feed, first - 1);
          emit(feed, list);
        });
      }
    },

    subscribe(workflowId, listener, after = 0) {
      let feed = feeds.get(workflowId);
      if (!feed) {
        feed = { cursor: after, listeners: new Set(), chain: Promise.resolve(), queued: 0 };
        feeds.set(workflowId, feed);
      }
      // Wrapped: the same function subscribed twice is two subscriptions.
      const entry: EventListener = (event) => listener(event);
      feed.listeners.add(entry);
      const mine = feed;
      return () => {
        mine.listeners.delete(entry);
        if (mine.listeners.size === 0 && feeds.get(workflowId) === mine) feeds.delete(workflowId);
      };
    },

    subscribeAll: (listener) => local.subscribeAll(listener),

    resync() {
      for (const [workflowId, feed] of feeds) {
        later(workflowId, feed, () => catchUp(workflowId, feed, Number.POSITIVE_INFINITY));
      }
    },
  };
}

/** `{"from", "e": [[workflowId, lastSeq], …]}`; anything else is ignored (a notice is only a hint to read). */
function parseNotice(payload: string): { from: string | undefined; entries: Array<[string, number]> } {
  try {
    const value: unknown = JSON.parse(payload);
    if (typeof value !== 'object' || value === null) return { from: undefined, entries: [] };
    const { from, e } = value as { from?: unknown; e?: unknown };
    const entries = Array.isArray(e)
      ? e.filter(
          (entry): entry is [string, number] =>
            Array.isArray(entry) && typeof entry[0] === 'string' && Number.isSafeInteger(entry[1]),
        )
      : [];
    return { from: typeof from === 'string' ? from : undefined, entries };
  } catch {
    return { from: undefined, entries: [] };
  }
}
