import type { EventType, WorkflowEvent } from '../domain/events.js';
import type { ChangeSet, NewWorkflow, TenantEfficiencyRecord, TenantRewardRecord } from '../domain/ports.js';
import type { NodePatch, NodeRecord, WorkflowPatch, WorkflowRecord } from '../domain/records.js';
import type { ReflectionEntry } from '../domain/reflection.js';
import type { EngineServices } from './services.js';
import { SpanRecorder } from './span-recorder.js';

/**
 * Everything a run changes, kept in memory (the node and workflow records are patched in place) and
 * queued for the next commit: events with the run's monotonic `seq`, node and workflow patches,
 * new child workflows, spans, reflection entries, the final efficiency record and reward.
 */
export class ChangeBuffer {
  readonly spans: SpanRecorder;
  /** Every event of this execution, for the efficiency record at the end (no re-read of a fresh run). */
  readonly emitted: WorkflowEvent[] = [];
  private pending: Required<ChangeSet> = emptyChanges();
  private readonly pendingNodes = new Map<string, NodePatch>();
  private backgroundFlushScheduled = false;

  constructor(
    private readonly workflow: WorkflowRecord,
    private seq: number,
    private readonly services: Pick<EngineServices, 'store' | 'bus' | 'clock' | 'onError'>,
  ) {
    this.spans = new SpanRecorder(
      { traceId: workflow.traceId, workflowId: workflow.id, tenantId: workflow.tenantId },
      () => services.clock.now(),
    );
  }

  emit(type: EventType, nodeId: string | null, payload: Record<string, unknown>): void {
    const event: WorkflowEvent = {
      workflowId: this.workflow.id,
      tenantId: this.workflow.tenantId,
      seq: ++this.seq,
      type,
      nodeId,
      at: this.services.clock.now(),
      payload,
    };
    this.pending.events.push(event);
    this.emitted.push(event);
  }

  patchNode(record: NodeRecord, patch: Omit<NodePatch, 'id'>): void {
    Object.assign(record, patch);
    // Patches of one node within one commit merge into one UPDATE (start + end of a fast step).
    const pending = this.pendingNodes.get(record.id);
    if (pending) Object.assign(pending, patch);
    else this.pendingNodes.set(record.id, { id: record.id, ...patch });
  }

  patchWorkflow(patch: Omit<WorkflowPatch, 'id'>): void {
    Object.assign(this.workflow, patch);
    this.pending.workflows.push({ id: this.workflow.id, ...patch });
  }

  addWorkflow(created: NewWorkflow): void {
    this.pending.newWorkflows.push(created);
  }

  addReflection(entry: ReflectionEntry): void {
    this.pending.reflections.push(entry);
  }

  addReflectionOutcome(id: string, success: boolean): void {
    this.pending.reflectionOutcomes.push({ id, success });
  }

  addMetrics(efficiency: TenantEfficiencyRecord[], rewards: TenantRewardRecord[]): void {
    this.pending.efficiency.push(...efficiency);
    this.pending.rewards.push(...rewards);
  }

  /** Commits everything pending in one transaction (grouped with other runs'), then publishes the events. */
  flush(): Promise<void> {
    const changes = this.pending;
    if (!this.spans.isEmpty) changes.spans = this.spans.drain();
    if (this.pendingNodes.size > 0) {
      changes.nodes = [...this.pendingNodes.values()];
      this.pendingNodes.clear();
    }
    if (isEmpty(changes)) return Promise.resolve();
    this.pending = emptyChanges();
    return this.services.store.commit(changes).then(() => {
      if (changes.events.length > 0) this.services.bus.publish(changes.events);
    });
  }

  /**
   * For progress that need not block the run (stepStart, agentPromptStart, retries): committed on
   * the next turn of the event loop, unless an awaited flush in this turn takes it along first —
   * which is what happens for a fast step, so it costs one transaction, not two.
   */
  flushInBackground(): void {
    if (this.backgroundFlushScheduled) return;
    this.backgroundFlushScheduled = true;
    setImmediate(() => {
      this.backgroundFlushScheduled = false;
      this.flush().catch((err) => this.services.onError(err, { workflowId: this.workflow.id }));
    });
  }
}

function isEmpty(changes: Required<ChangeSet>): boolean {
  return (
    changes.events.length === 0 &&
    changes.nodes.length === 0 &&
    changes.workflows.length === 0 &&
    changes.newWorkflows.length === 0 &&
    changes.reflections.length === 0 &&
    changes.reflectionOutcomes.length === 0 &&
    changes.spans.length === 0 &&
    changes.efficiency.length === 0 &&
    changes.rewards.length === 0
  );
}

function emptyChanges(): Required<ChangeSet> {
  return {
    newWorkflows: [],
    workflows: [],
    nodes: [],
    events: [],
    reflections: [],
    reflectionOutcomes: [],
    spans: [],
    efficiency: [],
    rewards: [],
  };
}
