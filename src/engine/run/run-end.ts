import type { Allocation } from '../../domain/allocation.js';
import type { ErrorInfo } from '../../domain/errors.js';
import type { EfficiencyRecord } from '../../domain/metrics.js';
import type { NodeRecord, WorkflowRecord } from '../../domain/records.js';
import type { Status } from '../../domain/status.js';
import { metricsChanges, withPending } from '../../metrics/final.js';
import type { RunJournal } from './journal.js';
import type { ReflectionLedger } from './reflection-ledger.js';
import type { EngineServices } from './services.js';

/** The run that ends, as its terminal commit needs it. */
export interface FinishedRun {
  workflow: WorkflowRecord;
  nodes: NodeRecord[];
  /** The last event seq earlier executions committed: 0 for a fresh run. */
  startSeq: number;
  journal: RunJournal;
  reflections: ReflectionLedger;
  allocation: Allocation | null;
  endedAt: number;
}

/**
 * The terminal state, its workflowEnd event, efficiency record and reward, all in the journal's next
 * commit (the caller commits). A cancelled run's unfinished nodes end cancelled with it.
 */
export async function finishRun(
  run: FinishedRun,
  end: { status: Status; output: unknown; error: ErrorInfo | null },
  services: Pick<EngineServices, 'store' | 'metrics' | 'onError'>,
): Promise<void> {
  const { journal, endedAt } = run;
  const { status, error } = end;
  if (status === 'cancelled') {
    for (const node of run.nodes) {
      if (node.status === 'idle' || node.status === 'running')
        journal.patchNode(node, { status: 'cancelled', endedAt });
    }
  }
  journal.patchWorkflow({ status, output: end.output, error, endedAt });
  const durationMs = endedAt - (run.workflow.startedAt ?? endedAt);
  journal.emit(null, { type: 'workflowEnd', payload: { status, durationMs, ...(error ? { error } : {}) } });
  try {
    await recordRunMetrics(run, services);
  } catch (err) {
    // Observability must never keep a workflow from ending: report and finish without a record.
    services.onError(err, { workflowId: run.workflow.id, during: 'efficiency record' });
  }
}

/**
 * The efficiency record and reward (docs/design.md#events-spans-metrics-and-rewards), computed from
 * the whole history of the run.
 */
async function recordRunMetrics(run: FinishedRun, services: Pick<EngineServices, 'store' | 'metrics'>): Promise<void> {
  const { workflow, journal, reflections } = run;
  // A resumed run reads what earlier executions committed; a fresh one has it all in memory.
  const earlier = run.startSeq > 0 ? await services.store.events(workflow.id, 0, run.startSeq) : [];
  const pending = withPending(
    { events: [...earlier, ...journal.emitted], reflections: reflections.history },
    { reflections: reflections.recorded, reflectionOutcomes: reflections.outcomes },
  );
  const metrics = metricsChanges({
    workflow,
    nodes: run.nodes,
    events: pending.events,
    reflections: pending.reflections,
    endedAt: run.endedAt,
    children: await childRecords(workflow, services),
    parallelAllowed: run.allocation?.parallel ?? true,
  });
  journal.addMetrics(metrics.efficiency, metrics.rewards);
}

/**
 * The efficiency records of every child workflow of the run, declared or spawned by a model (both
 * end before it, so their records are committed): the `subtree` roll-up counts each descendant once.
 */
async function childRecords(
  workflow: WorkflowRecord,
  services: Pick<EngineServices, 'store' | 'metrics'>,
): Promise<EfficiencyRecord[]> {
  const children = await services.store.children(workflow.id);
  const records = await Promise.all(children.map((child) => services.metrics.efficiency(workflow.tenantId, child.id)));
  return records.filter((r): r is EfficiencyRecord => r !== undefined);
}
