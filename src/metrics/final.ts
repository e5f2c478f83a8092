import type { WorkflowEvent } from '../domain/events.js';
import type { ChangeSet, TenantEfficiencyRecord, TenantRewardRecord } from '../domain/ports.js';
import type { ReflectionEntry } from '../domain/reflection.js';
import { type SummarizeInput, summarizeRun } from './efficiency.js';
import { rewardFor } from './rewards.js';

/**
 * What the engine adds to a workflow's final change set (docs/design.md#events-spans-metrics-and-rewards): its
 * efficiency record and,
 * unless it was cancelled or rejected at its checkpoint, its reward — so both commit with the terminal state or not at all.
 */

/**
 * The run's full history at its end: what is committed already plus what the final change set is
 * about to commit (events, new reflection entries, and outcomes settling earlier entries).
 */
export function withPending(
  committed: { events: readonly WorkflowEvent[]; reflections: readonly ReflectionEntry[] },
  pending: Pick<ChangeSet, 'events' | 'reflections' | 'reflectionOutcomes'>,
): { events: WorkflowEvent[]; reflections: ReflectionEntry[] } {
  const seen = new Set(committed.events.map((e) => e.seq));
  const events = [...committed.events, ...(pending.events ?? []).filter((e) => !seen.has(e.seq))].sort(
    (a, b) => a.seq - b.seq,
  );
  const known = new Set(committed.reflections.map((r) => r.id));
  const outcomes = new Map((pending.reflectionOutcomes ?? []).map((o) => [o.id, o.success]));
  const reflections = [...committed.reflections, ...(pending.reflections ?? []).filter((r) => !known.has(r.id))].map(
    (r) => (outcomes.has(r.id) ? { ...r, success: outcomes.get(r.id) ?? null } : r),
  );
  return { events, reflections };
}

export function metricsChanges(input: SummarizeInput): {
  efficiency: TenantEfficiencyRecord[];
  rewards: TenantRewardRecord[];
} {
  const tenant_id = input.workflow.tenantId;
  const record = summarizeRun(input);
  // A run rejected at its human checkpoint never started an agent: like a cancelled one, the
  // decision says nothing of the agents, so it gets no reward and feeds no selection history.
  const rejected = input.workflow.error?.code === 'CHECKPOINT_REJECTED';
  const reward = rejected ? undefined : rewardFor(record, [], { workflowStatus: input.workflow.status });
  return {
    efficiency: [{ ...record, tenant_id }],
    rewards: reward ? [{ ...reward, tenant_id }] : [],
  };
}
