import { DEFAULTS, type WorkflowDefinition } from '../../domain/definition.js';
import { AppError } from '../../domain/errors.js';
import type { Clock } from '../../domain/ports.js';
import type { NodeRecord, WorkflowRecord } from '../../domain/records.js';
import type { Complexity } from '../../domain/task.js';
import type { Deadline, RunDeadlines } from './deadline.js';
import type { RunJournal } from './journal.js';
import type { EngineServices } from './services.js';
import type { SpawnedChildren } from './spawned-children.js';

/**
 * Opens the execution's root span and, for a workflow no execution started yet, records its start:
 * a decided checkpoint, `running`, workflowStart, and the input_validation guardrail its checks at
 * submission passed. Returns the root span's id.
 *
 * One root agent_span per execution (docs/design.md#events-spans-metrics-and-rewards: the run is an
 * "orchestrator" agent_span); after a crash the old one ends `interrupted` and the resumed execution
 * gets its own. A fresh root run's span starts at submission, so the input_validation check lies
 * inside it.
 */
export function beginRun(
  journal: RunJournal,
  wf: WorkflowRecord,
  start: { complexity: Complexity; startedAt: number; parentSpan: string | null; clock: Clock },
): string {
  const submittedHere = wf.status === 'idle' && wf.parentWorkflowId === null;
  const rootStart = submittedHere ? wf.createdAt : start.clock.now();
  const root = journal.openSpan({
    type: 'agent_span',
    parentId: start.parentSpan,
    nodeId: null,
    fields: { agent_name: 'orchestrator' },
    startedAt: rootStart,
  });
  if (wf.status !== 'idle') return root;
  if (wf.checkpoint && wf.checkpoint.state !== 'pending') {
    const { state, reason } = wf.checkpoint;
    journal.emit(null, { type: 'checkpoint', payload: { state, complexity: start.complexity, reason } });
  }
  journal.patchWorkflow({ status: 'running', startedAt: start.startedAt });
  journal.emit(null, { type: 'workflowStart', payload: { name: wf.name, parentWorkflowId: wf.parentWorkflowId } });
  journal.recordSpan({
    type: 'guardrail_span',
    parentId: root,
    nodeId: null,
    fields: { guardrail_name: 'input_validation', triggered: false, blocking: true },
    startedAt: rootStart,
  });
  return root;
}

/**
 * A critical workflow before its approval (docs/design.md#complexity-allocation-selection-and-review):
 * it stays idle; its first execution says why with a `checkpoint` event, later ones (after a
 * restart) only leave it waiting.
 */
export async function announceApprovalWait(journal: RunJournal, complexity: Complexity, startSeq: number) {
  if (startSeq > 0) return;
  journal.emit(null, {
    type: 'checkpoint',
    payload: {
      state: 'pending',
      complexity,
      reason: 'critical complexity: POST /v1/workflows/{id}/approve or …/reject',
    },
  });
  await journal.commit();
}

/**
 * Spawned children a dead execution left running, which no node of the run is attached to, go on
 * under this execution's root span.
 */
export async function resumeOrphanedSpawns(
  workflowId: string,
  nodes: Iterable<NodeRecord>,
  store: EngineServices['store'],
  spawned: Pick<SpawnedChildren, 'launch'>,
  rootSpan: string,
): Promise<void> {
  const attached = new Set<string>();
  for (const node of nodes) if (node.childWorkflowId) attached.add(node.childWorkflowId);
  for (const child of await store.unfinishedChildren(workflowId)) {
    if (!attached.has(child.id)) spawned.launch(child, rootSpan);
  }
}

/**
 * The workflow's deadline (options.timeoutMs, default DEFAULTS.workflowTimeoutMs) from its start; a
 * workflow reopened for a reflection by hand gets its whole timeout again, from the request.
 */
export function workflowDeadline(
  deadlines: RunDeadlines,
  signal: AbortSignal,
  definition: WorkflowDefinition,
  at: { startedAt: number; reopenedAt: number | undefined; now: number },
): Deadline {
  const timeoutMs = definition.options?.timeoutMs ?? DEFAULTS.workflowTimeoutMs;
  const from = Math.max(at.startedAt, at.reopenedAt ?? 0);
  return deadlines.within(
    signal,
    Math.max(0, from + timeoutMs - at.now),
    () => new AppError('WORKFLOW_TIMEOUT', `the workflow did not finish within ${timeoutMs} ms`),
  );
}
