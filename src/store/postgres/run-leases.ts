import { AppError } from '../../domain/errors.js';
import type { ChangeSet } from '../../domain/ports.js';
import type { Fence } from './group-commit.js';
import type { Lease } from './leases.js';

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
 * claimed, checked by the batch's statement with the root rows locked FOR SHARE (no claim can move
 * an epoch until the write ends: migrations/postgres/0022). The sets of any other root are refused
 * with LEASE_LOST and `lost` is told, so the run stops. Sets of no run (creates, decisions) pass.
 */
export function createLeaseFence(owner: string, held: HeldLeases, lost: (rootWorkflowId: string) => void): Fence {
  const lose = (root: string) => {
    lost(root);
    return leaseLost(root);
  };
  return {
    owner,
    leaseOf(set: ChangeSet) {
      if (set.root === undefined) return undefined;
      return held.get(set.root) ?? lose(set.root);
    },
    lose,
  };
}
