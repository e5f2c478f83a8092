import type pg from 'pg';
import { AppError } from '../../domain/errors.js';
import type { ChangeSet } from '../../domain/ports.js';
import type { Fence } from './group-commit.js';
import type { Lease, LeaseBook } from './leases.js';

/**
 * The leases this instance holds, by root workflow id: what the claim loop took (leased-queue.ts)
 * and what the group commit's fence checks each change set's `root` against. One object, shared
 * by both, so a lease given up or lost stops being written under at once.
 */
export class HeldLeases {
  private readonly byRoot = new Map<string, Lease>();

  get(rootWorkflowId: string): Lease | undefined {
    return this.byRoot.get(rootWorkflowId);
  }

  has(rootWorkflowId: string): boolean {
    return this.byRoot.has(rootWorkflowId);
  }

  add(lease: Lease): void {
    this.byRoot.set(lease.workflowId, lease);
  }

  /** Forgets the root's lease; only `lease` itself when given (a newer claim of the root stays). */
  remove(rootWorkflowId: string, lease?: Lease): boolean {
    const held = this.byRoot.get(rootWorkflowId);
    if (!held || (lease && held !== lease)) return false;
    return this.byRoot.delete(rootWorkflowId);
  }

  values(): IterableIterator<Lease> {
    return this.byRoot.values();
  }

  get size(): number {
    return this.byRoot.size;
  }
}

export function leaseLost(rootWorkflowId: string): AppError {
  return new AppError('LEASE_LOST', `this instance no longer holds the lease of workflow ${rootWorkflowId}`);
}

/**
 * The fence of every group commit (docs/operations.md#scale-out): a change set made by a run (it
 * names its `root`) is written only while this instance holds that root's lease at the epoch it
 * claimed, checked inside the commit's own transaction with the root rows locked FOR SHARE (no
 * claim can move an epoch until the commit ends). The sets of any other root are refused with
 * LEASE_LOST and `lost` is told, so the run stops. Sets of no run (creates, decisions) pass.
 */
export function createLeaseFence(book: LeaseBook, held: HeldLeases, lost: (rootWorkflowId: string) => void): Fence {
  return {
    async check(tx, sets: readonly ChangeSet[]) {
      const roots = new Set<string>();
      for (const set of sets) if (set.root !== undefined) roots.add(set.root);
      if (roots.size === 0) return sets.map(() => undefined);
      const leases: Lease[] = [];
      for (const root of roots) {
        const lease = held.get(root);
        if (lease) leases.push(lease);
      }
      const confirmed = await book.fence(tx as pg.PoolClient, leases);
      for (const root of roots) if (!confirmed.has(root)) lost(root);
      return sets.map((set) => (set.root === undefined || confirmed.has(set.root) ? undefined : leaseLost(set.root)));
    },
  };
}
