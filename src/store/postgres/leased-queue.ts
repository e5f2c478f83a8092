import type { LeaseStats, RunningPlace, RunSignals, WorkQueue } from '../../domain/ports.js';
import { type LeaseBook, WORK_CHANNEL } from './leases.js';
import type { HeldLeases } from './run-leases.js';
import type { Wakeups } from './wakeups.js';

export const CANCEL_CHANNEL = 'baton_cancel';
/** Kept under PostgreSQL's 8000-byte payload limit; longer id lists go out in several notifications. */
const MAX_IDS_PER_NOTICE = 150;
/** Own submissions a claim prefers, at most (older ones are still claimed, by whoever has room). */
const MAX_SUBMITTED = 4096;

export interface LeasedQueueOptions {
  /** Running places and their fairness on this instance (the in-process queue). */
  local: WorkQueue;
  book: LeaseBook;
  held: HeldLeases;
  wakeups: Wakeups;
  /** This instance (leases are taken in its name). */
  owner: string;
  /** Most roots this instance runs at once (MAX_RUNNING_WORKFLOWS). */
  concurrency: number;
  leaseMs: number;
  heartbeatMs: number;
  /** Idle instances look for work this often even without a notification; default 1 s. */
  pollMs?: number;
  onError: (err: unknown, context: Record<string, unknown>) => void;
}

export interface LeasedWorkQueue extends WorkQueue {
  /** The fence refused a write of this root: the lease is gone, its runs stop. */
  lost(rootWorkflowId: string): void;
  stats(): LeaseStats;
}

/**
 * The work queue of an instance among several over one PostgreSQL (docs/operations.md#scale-out).
 * The queue is the `workflows` table itself: a root runs here only while this instance holds its
 * lease. Claims take roots whose lease is free or past its time (fewest live leases per tenant
 * first, capped per tenant across instances, leases.ts), as many as there is room for, and hand
 * them to the local queue for a running place. Every instance claims when told of new work
 * (NOTIFY on release, decision, and on submit when the instance that took it has no room), when it
 * reaps expired leases (every lease/2) and, idle, once a second. One heartbeat renews all of this
 * instance's leases; a lease it does not renew (or
 * a write the fence refuses) is lost: the executor stops that tree at once and writes nothing
 * more. A run ending gives its lease back (parked when it waits for a person).
 */
export function createLeasedWorkQueue(options: LeasedQueueOptions): LeasedWorkQueue {
  const { local, book, held, wakeups, owner, concurrency, leaseMs, heartbeatMs, onError } = options;
  const pollMs = options.pollMs ?? 1000;
  const stats = { claims: 0, losses: 0, reaps: 0, fenceRejections: 0 };
  /** Held roots enqueued again while they run: they run once more under the same lease. */
  const again = new Set<string>();
  /** Roots `runHere` settles now (a cancel), outside the local queue. */
  const settling = new Set<string>();
  /** Held roots whose run stopped to wait until then: parked when their lease is given back. */
  const resumeAt = new Map<string, number>();
  let signals: RunSignals | undefined;
  let delivering = false;
  let claiming: Promise<void> | undefined;
  let claimWanted = false;
  /**
   * Whether a claim may find something: false once a claim took every claimable root, until this
   * instance hears of new work (a submission here, a notice, a reap, the idle poll). A run ending
   * here then claims only while roots wait (behind a tenant's cap, say), not after every run.
   */
  let mayFind = true;
  /** The next claim fills all the room (set by news), else takes `submitted` and `placesFreed`. */
  let claimAll = true;
  let placesFreed = 0;
  /** Roots this instance accepted (or was told to run again) that no claim of its own took yet. */
  const submitted = new Set<string>();
  let noticeQueued = false;
  let timers: NodeJS.Timeout[] = [];
  let poll: NodeJS.Timeout | undefined;
  let unsubscribe: Array<() => void> = [];

  const report = (err: unknown, context: Record<string, unknown> = {}) => {
    try {
      onError(err, context);
    } catch {
      // The reporter failing must not stop the claim loop.
    }
  };

  function lose(rootWorkflowId: string): void {
    const lease = held.get(rootWorkflowId);
    if (!lease || !held.remove(rootWorkflowId, lease)) return;
    stats.losses += 1;
    again.delete(rootWorkflowId);
    signals?.lost(rootWorkflowId);
  }

  /**
   * Claims when something may wait. `news`: this instance heard of work (a notice, a reap, the
   * poll): the claim may fill all its room. `own`: it accepted a submission: the claim takes its
   * own submissions first and no more than their number, so the roots go where the load balancer
   * sent them, not to whichever instance claims first. `release`: a place came free here: one root.
   * `pending`: what was asked for while a claim ran.
   */
  function claimSoon(reason: 'news' | 'own' | 'release' | 'pending' = 'news'): void {
    if (reason === 'release') placesFreed += 1;
    else if (reason !== 'pending') mayFind = true;
    if (reason === 'news') claimAll = true;
    if (!delivering || !mayFind) return;
    if (claiming) {
      claimWanted = true;
      return;
    }
    claiming = (async () => {
      do {
        claimWanted = false;
        const room = concurrency - held.size;
        if (room <= 0) return;
        const preferred = [...submitted];
        const limit = claimAll ? room : Math.min(room, preferred.length + placesFreed);
        claimAll = false;
        placesFreed = 0;
        if (limit <= 0) continue;
        const { leases, waiting } = await book.claim(limit, preferred);
        // Claimed here or not (another instance's, or behind a cap), they are no longer news.
        for (const id of preferred) submitted.delete(id);
        // Work heard of while this claim ran sets it again (the claim may have missed it).
        if (!claimWanted) mayFind = waiting > 0;
        stats.claims += leases.length;
        for (const lease of leases) {
          held.add(lease);
          local.enqueue(lease.workflowId, lease.tenantId);
        }
        // A full claim may have left more behind: for this instance's next claim, and for others
        // with room (a submission here announces nothing while this instance has room).
        if (leases.length === room) {
          claimWanted = true;
          if (waiting > 0) {
            claimAll = true;
            announceWork();
          }
        }
      } while (claimWanted && delivering);
    })()
      .catch((err) => report(err))
      .finally(() => {
        claiming = undefined;
        if (claimWanted) claimSoon('pending');
      });
  }

  /** One work notice per event-loop turn, however many submissions it had. */
  function announceWork(): void {
    if (noticeQueued) return;
    noticeQueued = true;
    setImmediate(() => {
      noticeQueued = false;
      wakeups.notify(WORK_CHANNEL, owner).catch((err) => report(err));
    });
  }

  async function runHeld(
    handler: (workflowId: string, place: RunningPlace, untouched: boolean) => Promise<void>,
    workflowId: string,
    place: RunningPlace,
  ): Promise<void> {
    const lease = held.get(workflowId);
    if (!lease) return; // lost while it waited for a place
    try {
      // Only its first run can find the workflow as it was submitted.
      for (let untouched = lease.untouched; ; untouched = false) {
        again.delete(workflowId);
        await handler(workflowId, place, untouched);
        if (resumeAt.has(workflowId)) break; // the resume job runs it again
        if (!again.has(workflowId) || held.get(workflowId) !== lease || !delivering) break;
        if (!place.held) await place.retake(new AbortController().signal);
      }
    } finally {
      again.delete(workflowId);
      const at = resumeAt.get(workflowId);
      resumeAt.delete(workflowId);
      // The release itself sends the work notice (a parked run's job wakes it when it is due).
      if (held.remove(workflowId, lease)) await book.release(lease, at).catch((err) => report(err, { workflowId }));
      // A place is free: worth a claim while roots wait (its tenant's cap may have held one back).
      claimSoon('release');
    }
  }

  async function heartbeat(): Promise<void> {
    if (held.size === 0) return;
    // Judged are only the leases held before the statement: one claimed meanwhile is not in its answer.
    const before = new Map([...held.values()].map((lease) => [lease.workflowId, lease]));
    const renewed = await book.heartbeat();
    for (const [id, lease] of before) {
      if (!renewed.has(id) && held.get(id) === lease) lose(id);
    }
  }

  async function reap(): Promise<void> {
    const reaped = await book.reap();
    if (reaped.length === 0) return;
    stats.reaps += reaped.length;
    announceWork();
    claimSoon();
  }

  function every(ms: number, work: () => Promise<void> | void): NodeJS.Timeout {
    const timer = setInterval(() => {
      Promise.resolve()
        .then(work)
        .catch((err) => report(err));
    }, ms);
    timer.unref();
    timers.push(timer);
    return timer;
  }

  async function listen(): Promise<void> {
    unsubscribe.push(
      await wakeups.subscribe(WORK_CHANNEL, (from) => {
        if (from !== owner) claimSoon();
      }),
      await wakeups.subscribe(CANCEL_CHANNEL, (payload) => {
        const notice = parseCancel(payload);
        if (notice && notice.from !== owner) signals?.cancelled(notice.ids);
      }),
    );
  }

  return {
    enqueue(workflowId, _tenantId) {
      // The row is durable already: the enqueue only tells whoever has room (this instance first).
      if (held.has(workflowId)) again.add(workflowId);
      else {
        if (submitted.size >= MAX_SUBMITTED) submitted.delete(submitted.values().next().value as string);
        submitted.add(workflowId);
        claimSoon('own');
        // With room here, this instance's own claim takes it (or a tenant's cap holds it back
        // everywhere, until a release's notice): the others need telling only when it cannot.
        if (!delivering || held.size >= concurrency) announceWork();
      }
    },

    start(handler, runSignals) {
      if (delivering) throw new Error('work queue already started');
      delivering = true;
      signals = runSignals;
      local.start((workflowId, place) => runHeld(handler, workflowId, place));
      every(heartbeatMs, heartbeat);
      every(Math.max(1, Math.floor(leaseMs / 2)), reap);
      poll = every(pollMs, () => {
        if (held.size < concurrency) claimSoon();
      });
      listen().catch((err) => report(err));
      claimSoon();
    },

    async runHere(workflowId, work) {
      if (held.has(workflowId)) {
        await work();
        return true;
      }
      const lease = await book.claimOne(workflowId);
      if (!lease) return false;
      stats.claims += 1;
      held.add(lease);
      settling.add(workflowId);
      try {
        await work();
      } finally {
        settling.delete(workflowId);
        if (held.remove(workflowId, lease)) await book.release(lease).catch((err) => report(err, { workflowId }));
      }
      return true;
    },

    resumeAt(workflowId, _tenantId, at) {
      if (held.has(workflowId)) resumeAt.set(workflowId, at);
    },

    announceCancel(workflowIds) {
      for (let i = 0; i < workflowIds.length; i += MAX_IDS_PER_NOTICE) {
        const ids = workflowIds.slice(i, i + MAX_IDS_PER_NOTICE);
        wakeups.notify(CANCEL_CHANNEL, JSON.stringify({ from: owner, ids })).catch((err) => report(err));
      }
    },

    place: (tenantId, signal) => local.place(tenantId, signal),
    placesHeld: (tenantId) => local.placesHeld(tenantId),

    async stop() {
      delivering = false;
      clearInterval(poll);
      // Runs still going keep their leases alive until they settle (the heartbeat stops after).
      await local.stop();
      await claiming;
      // Claimed but never started (the local queue stopped first): given back now, so another
      // instance takes them at once rather than when their lease runs out.
      // Each release sends its work notice.
      for (const lease of [...held.values()]) {
        if (settling.has(lease.workflowId) || !held.remove(lease.workflowId, lease)) continue;
        await book.release(lease).catch((err) => report(err, { workflowId: lease.workflowId }));
      }
      for (const timer of timers) clearInterval(timer);
      timers = [];
      for (const off of unsubscribe) off();
      unsubscribe = [];
    },

    lost(rootWorkflowId) {
      stats.fenceRejections += 1;
      lose(rootWorkflowId);
    },

    stats: () => ({ held: held.size, ...stats }),

    get depth() {
      return local.depth;
    },
  };
}

function parseCancel(payload: string): { from: string; ids: string[] } | undefined {
  try {
    const value: unknown = JSON.parse(payload);
    if (typeof value !== 'object' || value === null) return undefined;
    const { from, ids } = value as { from?: unknown; ids?: unknown };
    if (typeof from !== 'string' || !Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) return undefined;
    return { from, ids };
  } catch {
    return undefined;
  }
}
