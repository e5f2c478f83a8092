import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import type { WorkflowStore } from '../../../src/domain/ports.js';
import { createPostgresCommitter } from '../../../src/store/postgres/group-commit.js';
import { createPostgresWorkflowStore } from '../../../src/store/postgres/workflows.js';
import { emptyPostgresStore } from '../../support/postgres-store.js';
import { newWorkflow } from '../../support/store-fixtures.js';

/**
 * Instances racing over one PostgreSQL: each store here has its own group committer, as each
 * baton process has, so their transactions interleave in the database rather than queue in one
 * process (the contract suites cover one instance). Each race has one winner.
 */
async function twoInstances(): Promise<[WorkflowStore, WorkflowStore]> {
  const { pool } = await emptyPostgresStore();
  return [
    createPostgresWorkflowStore(pool, createPostgresCommitter(pool)),
    createPostgresWorkflowStore(pool, createPostgresCommitter(pool)),
  ];
}

describe('PostgreSQL: instances racing', () => {
  it('create the workflow once for one idempotency key, whichever commits first', async () => {
    const [a, b] = await twoInstances();
    for (let round = 0; round < 10; round++) {
      const claim = { key: `key-${round}`, bodyHash: 'h', notBefore: 0 };
      const first = newWorkflow({ tenantId: 'acme' });
      const second = newWorkflow({ tenantId: 'acme' });
      const results = await Promise.all([a.create(first, claim), b.create(second, claim)]);
      const kinds = results.map((r) => r.kind).sort();
      expect(kinds).toEqual(['created', 'replayed']);
      const winner = results.find((r) => r.kind === 'created');
      const replayed = results.find((r) => r.kind === 'replayed');
      if (winner?.kind !== 'created' || replayed?.kind !== 'replayed') throw new Error('unreachable');
      expect(replayed.workflow.id).toBe(winner.workflow.id);
      // The loser's workflow was rolled back with its key.
      const loser = winner.workflow.id === first.workflow.id ? second : first;
      expect(await a.getById(loser.workflow.id)).toBeUndefined();
    }
  });

  it('settle a checkpoint once and reopen a failed workflow once', async () => {
    const [a, b] = await twoInstances();
    const waiting = newWorkflow({ tenantId: 'acme' });
    waiting.workflow.checkpoint = { state: 'pending', reason: null, at: null };
    await a.create(waiting);
    const decisions = await Promise.all([
      a.decideCheckpoint('acme', waiting.workflow.id, { state: 'approved', reason: null, at: 1 }),
      b.decideCheckpoint('acme', waiting.workflow.id, { state: 'rejected', reason: null, at: 2 }),
    ]);
    expect(decisions.map((d) => d?.decided).sort()).toEqual([false, true]);

    const failed = newWorkflow({ tenantId: 'acme', status: 'failed' });
    const step = failed.nodes[1];
    if (step) step.status = 'failed';
    await a.create(failed);
    const ask = () => ({
      id: newId('rr'),
      workflowId: failed.workflow.id,
      nodeId: step?.id as string,
      reason: null,
      requestedAt: 5,
    });
    const reopened = await Promise.all([a.requestReflection('acme', ask(), 5), b.requestReflection('acme', ask(), 5)]);
    expect(reopened.map((r) => r?.reopened).sort()).toEqual([false, true]);
    expect(await a.reflectionRequestCounts(failed.workflow.id)).toEqual(new Map([[step?.id, 1]]));
  });
});
