import type pg from 'pg';
import type { ChangeSet } from '../../domain/ports.js';
import type { Tx } from './analytics-writes.js';
import { writeChangeSets } from './change-writes.js';

/**
 * Group commit on PostgreSQL (docs/design.md#storage). Change sets queued during one event-loop
 * turn — and all those queued while the previous batch was committing — are written by ONE
 * statement, its own transaction (change-writes.ts: a call of baton_group_commit), and each
 * caller's promise settles only once it committed. One batch is in flight at a time, so an
 * instance's commits land in the order it made them. A batch that fails is replayed change set by
 * change set, each in a statement of its own, so one bad change set fails only its own caller.
 *
 * A change set may be fenced: `fence` names the lease its run writes under, and the batch's
 * statement (baton_group_commit) writes nothing when any of those leases is no longer this
 * instance's at its epoch, answering which. The sets of those roots are rejected with what `fence`
 * gives, and the others written again without them.
 *
 * Scaled out, each batch that wrote events also sends one `pg_notify` on EVENTS_CHANNEL listing
 * `(workflow, last seq)` and this instance, delivered with the COMMIT, so every instance can feed its own event
 * streams from the journal (shared-event-bus.ts).
 */
export interface PostgresCommitter {
  commit(changes: ChangeSet): Promise<void>;
  /** Runs `work` in a transaction of its own, serialized with the batches (conditional updates, keyed creates). */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** Resolves once everything queued before the call has committed or failed. */
  drain(): Promise<void>;
  readonly pending: number;
}

export interface Fence {
  /** This instance's lease owner id. */
  readonly owner: string;
  /**
   * The lease the set's run writes under; undefined for a set of no run (creates, decisions), or
   * the error that rejects it when this instance holds no lease of its root.
   */
  leaseOf(set: ChangeSet): { workflowId: string; epoch: number } | Error | undefined;
  /** The database found the root's lease no longer this instance's: the error its sets get. */
  lose(rootWorkflowId: string): Error;
}

export interface CommitterOptions {
  fence?: Fence;
  /** Announce the events of every batch on EVENTS_CHANNEL, as sent by this instance. */
  announceEvents?: { from: string };
}

/** baton_group_commit (migrations/postgres/0022) notifies on it by this name. */
export const EVENTS_CHANNEL = 'baton_events';
/** PostgreSQL refuses a payload of 8000 bytes or more: longer lists go out in several notifications. */
const MAX_PAYLOAD_BYTES = 7000;

/**
 * `{"from": instance, "e": [[workflowId, lastSeq], …]}` of the sets' events, as payloads under the
 * size limit. `from` lets the sender skip its own notices: it published those events itself.
 */
export function eventNotices(sets: readonly ChangeSet[], from: string): string[] {
  const last = new Map<string, number>();
  for (const set of sets) {
    for (const event of set.events ?? []) {
      if (event.seq > (last.get(event.workflowId) ?? 0)) last.set(event.workflowId, event.seq);
    }
  }
  const payloads: string[] = [];
  const head = `{"from":${JSON.stringify(from)},"e":[`;
  let entries: string[] = [];
  let bytes = head.length + 2;
  for (const [id, seq] of last) {
    const entry = JSON.stringify([id, seq]);
    if (entries.length > 0 && bytes + entry.length + 1 > MAX_PAYLOAD_BYTES) {
      payloads.push(`${head}${entries.join(',')}]}`);
      entries = [];
      bytes = head.length + 2;
    }
    entries.push(entry);
    bytes += entry.length + 1;
  }
  if (entries.length > 0) payloads.push(`${head}${entries.join(',')}]}`);
  return payloads;
}

interface Queued {
  changes?: ChangeSet;
  work?: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

export function createPostgresCommitter(pool: pg.Pool, options: CommitterOptions = {}): PostgresCommitter {
  const { fence, announceEvents } = options;
  let queue: Queued[] = [];
  let running: Promise<void> | undefined;
  let scheduled = false;

  function schedule(): void {
    if (scheduled || running) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      if (!running) running = loop();
    });
  }

  async function loop(): Promise<void> {
    try {
      while (queue.length > 0) {
        const batch = queue;
        queue = [];
        await commitBatch(batch);
      }
    } finally {
      running = undefined;
    }
  }

  async function inTransaction<T>(work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  /** Writes the change sets that pass the fence; returns what rejected the others. */
  async function writeSets(items: readonly Queued[]): Promise<Map<Queued, Error>> {
    const rejected = new Map<Queued, Error>();
    let admitted: Array<{ item: Queued; lease?: { workflowId: string; epoch: number } }> = [];
    for (const item of items) {
      const lease = fence?.leaseOf(item.changes as ChangeSet);
      if (lease instanceof Error) rejected.set(item, lease);
      else admitted.push(lease ? { item, lease } : { item });
    }
    while (admitted.length > 0) {
      const sets = admitted.map((a) => a.item.changes as ChangeSet);
      const leases = new Map(admitted.flatMap((a) => (a.lease ? [[a.lease.workflowId, a.lease]] : [])));
      const notices = announceEvents ? eventNotices(sets, announceEvents.from) : [];
      const lost = new Set(
        await writeChangeSets(pool, sets, { owner: fence?.owner ?? '', leases: [...leases.values()] }, notices),
      );
      if (lost.size === 0) break;
      // Nothing was written: the sets of the lost roots are refused, the others written again.
      const errors = new Map([...lost].map((root) => [root, (fence as Fence).lose(root)]));
      admitted = admitted.filter(({ item, lease }) => {
        const error = lease && errors.get(lease.workflowId);
        if (error) rejected.set(item, error);
        return !error;
      });
    }
    return rejected;
  }

  async function commitBatch(batch: Queued[]): Promise<void> {
    // Conditional work runs alone, in queue order relative to the change sets around it.
    let i = 0;
    while (i < batch.length) {
      const item = batch[i] as Queued;
      if (item.work) {
        i++;
        await inTransaction(item.work).then(item.resolve, item.reject);
        continue;
      }
      let j = i;
      while (j < batch.length && (batch[j] as Queued).changes) j++;
      await commitSets(batch.slice(i, j));
      i = j;
    }
  }

  async function commitSets(items: Queued[]): Promise<void> {
    try {
      const rejected = await writeSets(items);
      for (const item of items) {
        const error = rejected.get(item);
        if (error) item.reject(error);
        else item.resolve(undefined);
      }
    } catch (err) {
      if (items.length === 1) {
        (items[0] as Queued).reject(err);
        return;
      }
      // The batch rolled back as a whole: replay each alone so one bad change set fails only its caller.
      for (const item of items) {
        try {
          const rejected = await writeSets([item]);
          const error = rejected.get(item);
          if (error) item.reject(error);
          else item.resolve(undefined);
        } catch (err) {
          item.reject(err);
        }
      }
    }
  }

  function enqueue<T>(item: Omit<Queued, 'resolve' | 'reject'>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ ...item, resolve: resolve as (value: unknown) => void, reject });
      schedule();
    });
  }

  return {
    commit: (changes) => enqueue<void>({ changes }),
    transaction: <T>(work: (tx: Tx) => Promise<T>) => enqueue<T>({ work }),
    async drain() {
      while (running || scheduled || queue.length > 0) {
        if (running) await running;
        else await new Promise((resolve) => setImmediate(resolve));
      }
    },
    get pending() {
      return queue.length;
    },
  };
}
