/**
 * FIFO queues per group (a tenant), served round-robin: after a group is served, the next group in
 * line is served before it again, so one tenant's backlog never makes another's work wait behind it
 * (docs/design.md#security fair scheduling). Used by the work queue (which workflow starts next) and the model
 * call slots (which call gets the next free slot).
 */
export interface FairQueue<T> {
  push(group: string, item: T): void;
  /** The oldest item of the next group in turn that `eligible` accepts; undefined when none. */
  take(eligible?: (group: string) => boolean): T | undefined;
  /** Removes a waiting item (e.g. its caller gave up); true when it was waiting. */
  remove(group: string, item: T): boolean;
  /** Marks `group` as just served without taking from the queue (it got a slot without waiting). */
  served(group: string): void;
  /** The groups with items waiting, in turn order. */
  readonly groups: readonly string[];
  readonly size: number;
}

export function createFairQueue<T>(): FairQueue<T> {
  const queues = new Map<string, T[]>();
  /** Groups with waiting items, in the order they are served. */
  const ring: string[] = [];
  /** The group served last; the next turn starts after it when it is still waiting. */
  let lastServed: string | undefined;
  /** Where the next turn starts when `lastServed` left the ring (its queue ran empty). */
  let cursor = 0;
  let size = 0;

  const leaveRing = (index: number): void => {
    queues.delete(ring[index] as string);
    ring.splice(index, 1);
  };

  return {
    push(group, item) {
      const queue = queues.get(group);
      if (queue) queue.push(item);
      else {
        queues.set(group, [item]);
        ring.push(group);
      }
      size++;
    },

    take(eligible) {
      const n = ring.length;
      if (n === 0) return undefined;
      const last = lastServed === undefined ? -1 : ring.indexOf(lastServed);
      const start = last >= 0 ? last + 1 : cursor;
      for (let step = 0; step < n; step++) {
        const index = (start + step) % n;
        const group = ring[index] as string;
        if (eligible && !eligible(group)) continue;
        const queue = queues.get(group) as T[];
        const item = queue.shift() as T;
        size--;
        lastServed = group;
        if (queue.length === 0) {
          leaveRing(index);
          // The group after the one that left now sits at `index`: it is next.
          cursor = index;
        }
        return item;
      }
      return undefined;
    },

    remove(group, item) {
      const queue = queues.get(group);
      const index = queue?.indexOf(item) ?? -1;
      if (!queue || index < 0) return false;
      queue.splice(index, 1);
      size--;
      if (queue.length === 0) {
        const at = ring.indexOf(group);
        leaveRing(at);
        if (at < cursor) cursor--;
      }
      return true;
    },

    served(group) {
      lastServed = group;
    },

    get groups() {
      return ring;
    },

    get size() {
      return size;
    },
  };
}
