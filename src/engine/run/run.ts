import type { Allocation } from '../../domain/allocation.js';
import {
  type AgentConfig,
  agentNamed,
  DEFAULTS,
  type PromptNode,
  type WorkflowDefinition,
  type WorkflowNode,
} from '../../domain/definition.js';
import { AppError, type ErrorInfo, toErrorInfo } from '../../domain/errors.js';
import type { EfficiencyRecord } from '../../domain/metrics.js';
import type { RunningPlace } from '../../domain/ports.js';
import type { NodeRecord, WorkflowRecord } from '../../domain/records.js';
import type { ReflectionEntry, ReflectionRequest } from '../../domain/reflection.js';
import type { Status } from '../../domain/status.js';
import type { Complexity } from '../../domain/task.js';
import { MISSING, type TemplateScope } from '../../domain/templates.js';
import { metricsChanges, withPending } from '../../metrics/final.js';
import { cancelledError, isCancellation, isShutdown, shuttingDownError } from '../errors.js';
import type { AgentSlots, Limits, NodeAttempt, NodeContext, RunView } from '../node-context.js';
import { handlerOf } from '../nodes/table.js';
import { routingOf } from '../submission/routing.js';
import { agentSlots } from './agent-slots.js';
import { createChildLauncher } from './child-launcher.js';
import { followedController, RunDeadlines } from './deadline.js';
import { RunJournal } from './journal.js';
import { RunModelGateway } from './model-gateway.js';
import { ReflectionLedger } from './reflection-ledger.js';
import { Reopening } from './reopening.js';
import { ownBudgetRefusal, RequestBudget } from './request-budget.js';
import { RunPlace } from './run-place.js';
import type { EngineServices } from './services.js';
import { SpawnedChildren } from './spawned-children.js';
import { RunToolBox } from './tool-box.js';
import { maxLlmCallsOf } from './tree-budgets.js';
import { RunTurnLog } from './turn-log.js';

/** What an execution starts from: the rows earlier executions committed (empty for a fresh run). */
export interface RunStart {
  nodes: readonly NodeRecord[];
  lastSeq: number;
  reflections?: readonly ReflectionEntry[] | undefined;
  /** Provider requests earlier executions sent: a resumed run keeps paying from the same budget. */
  requestsSent?: number | undefined;
  /** The request budget of the run's whole tree (its root's maxLlmCalls), which its own draws on. */
  treeBudget?: RequestBudget | undefined;
  /** The newest reflection asked for by hand: a non-terminal workflow with one was reopened for it. */
  reflectionRequest?: ReflectionRequest | undefined;
}

/**
 * One execution of one workflow (docs/design.md#execution): its lifecycle and the attempt loop of its nodes. Node
 * kinds run through the handler table with a NodeContext (node-context.ts), never this class; each
 * node's result is committed, with its events and spans, before the run moves on when its handler
 * says it must be durable. Completed nodes replay their stored output, which makes restarts resumable.
 */
export class Run implements RunView {
  private readonly byName = new Map<string, NodeRecord>();
  readonly nodes = new Map<string, NodeRecord>();
  readonly definition: WorkflowDefinition;
  readonly limits: Limits;
  readonly templateScope: TemplateScope;
  readonly complexity: Complexity;
  readonly allocation: Allocation | null;
  private readonly agentSlots: AgentSlots;
  private readonly controller = followedController();
  private readonly deadlines: RunDeadlines;
  /** Children the agents spawned: the run ends after them (and they end with the run's signal). */
  private readonly spawned: SpawnedChildren;
  private readonly journal: RunJournal;
  private readonly reflections: ReflectionLedger;
  private readonly turns: RunTurnLog;
  private readonly context: NodeContext;
  private readonly reported = new WeakSet<object>();
  private readonly startSeq: number;
  /** The running place this execution holds (given back while it only waits on children). */
  private readonly place: RunPlace;
  /** Set when a person reopened this failed workflow to reflect on one node (reopening.ts). */
  private readonly reopening: Reopening | undefined;

  constructor(
    readonly workflow: WorkflowRecord,
    start: RunStart,
    private readonly services: EngineServices,
    place?: RunningPlace,
  ) {
    for (const node of start.nodes) {
      this.byName.set(node.name, node);
      this.nodes.set(node.id, node);
    }
    this.definition = workflow.definition;
    this.limits = {
      ...DEFAULTS.limits,
      ...this.definition.options?.limits,
      maxLlmCalls: maxLlmCallsOf(this.definition, services.maxLlmCallsPerWorkflow),
      maxNodeOutputBytes: services.maxNodeOutputBytes,
      maxConversationBytes: services.maxConversationBytes,
    };
    // Settled when the workflow was planned; a row stored before migration 0027 has none yet.
    ({ complexity: this.complexity, allocation: this.allocation } = workflow.routing ?? routingOf(this.definition));
    this.agentSlots = agentSlots(this.allocation);
    this.templateScope = {
      input: this.definition.input,
      stepOutput: (name) => {
        const node = this.byName.get(name);
        return node?.status === 'completed' ? node.output : MISSING;
      },
    };
    this.startSeq = start.lastSeq;
    this.reopening =
      start.reflectionRequest && new Reopening(start.reflectionRequest, this.nodes, start.reflections ?? []);
    this.deadlines = new RunDeadlines(services.clock);
    this.journal = new RunJournal(workflow, start.lastSeq, services);
    this.reflections = new ReflectionLedger(this, this.journal, () => services.clock.now(), start.reflections);
    const { maxLlmCalls } = this.limits;
    const budget = new RequestBudget(start.requestsSent ?? 0, maxLlmCalls, ownBudgetRefusal, start.treeBudget);
    this.turns = new RunTurnLog(this.journal, services.store, workflow.id, start.lastSeq);
    const children = createChildLauncher(this, this.nodes, this.journal, this.turns, services);
    this.spawned = new SpawnedChildren(children, this.controller.signal, services.onError);
    this.place = new RunPlace(place, this.controller.signal);
    this.context = {
      view: this,
      journal: this.journal,
      models: new RunModelGateway(this.journal, services, workflow.tenantId, budget),
      children,
      tools: new RunToolBox(this.journal, this, children, this.spawned, services),
      turns: this.turns,
      retrieval: {
        corpus: (idOrName) => services.corpora.get(workflow.tenantId, idOrName),
        search: (corpusId, query, k) => services.corpora.search(workflow.tenantId, corpusId, query, k),
        engagement: (filter) => services.engagement.sums(workflow.tenantId, filter),
      },
      reflections: this.reflections,
      agents: this.agentSlots,
      clock: services.clock,
      deadlines: this.deadlines,
      place: this.place,
      runNode: (node, signal, parentSpan) => this.runNode(node, signal, parentSpan),
    };
  }

  agent(name: string): AgentConfig | undefined {
    return agentNamed(this.definition.agents, name);
  }

  cacheEnabled(node: PromptNode, agent: AgentConfig): boolean {
    return (
      this.definition.options?.cache !== false && agent.enableCache !== false && node.overrides?.disableCache !== true
    );
  }

  abort(reason: AppError): void {
    this.controller.abort(reason);
  }

  /** Runs to a terminal state; rethrows only SHUTTING_DOWN (the workflow then resumes at next start). */
  async execute(
    parentSignal: AbortSignal | undefined,
    cancelRequested: boolean,
    parentSpan: string | null,
  ): Promise<void> {
    const { clock } = this.services;
    const wf = this.workflow;
    const cancelling = cancelRequested || wf.cancelRequested;
    if (cancelling) this.controller.abort(cancelledError());
    else if (wf.checkpoint?.state === 'pending') return this.awaitApproval();
    const onParentAbort = () => this.controller.abort(parentSignal?.reason);
    if (parentSignal?.aborted) onParentAbort();
    else parentSignal?.addEventListener('abort', onParentAbort, { once: true });

    const startedAt = wf.startedAt ?? clock.now();
    const timeoutMs = this.definition.options?.timeoutMs ?? DEFAULTS.workflowTimeoutMs;
    // A reopened workflow gets its whole timeout again, from the request.
    const deadlineFrom = Math.max(startedAt, this.reopening?.request.requestedAt ?? 0);
    const deadline = this.deadlines.within(
      this.controller.signal,
      Math.max(0, deadlineFrom + timeoutMs - clock.now()),
      () => new AppError('WORKFLOW_TIMEOUT', `the workflow did not finish within ${timeoutMs} ms`),
    );
    // One root agent_span per execution (docs/design.md#events-spans-metrics-and-rewards: the run is an
    // "orchestrator" agent_span); after a
    // crash the old one ends `interrupted` and the resumed execution gets its own. A fresh root run's
    // span starts at submission, so the input_validation check lies inside it.
    const submittedHere = wf.status === 'idle' && wf.parentWorkflowId === null;
    const rootStart = submittedHere ? wf.createdAt : clock.now();
    const root = this.journal.openSpan({
      type: 'agent_span',
      parentId: parentSpan,
      nodeId: null,
      fields: { agent_name: 'orchestrator' },
      startedAt: rootStart,
    });
    if (wf.status === 'idle') {
      if (wf.checkpoint && wf.checkpoint.state !== 'pending') {
        const { state, reason } = wf.checkpoint;
        this.journal.emit(null, { type: 'checkpoint', payload: { state, complexity: this.complexity, reason } });
      }
      this.journal.patchWorkflow({ status: 'running', startedAt });
      this.journal.emit(null, {
        type: 'workflowStart',
        payload: { name: wf.name, parentWorkflowId: wf.parentWorkflowId },
      });
      // The definition passed its checks at submission; recorded from the root span's start.
      this.journal.recordSpan({
        type: 'guardrail_span',
        parentId: root,
        nodeId: null,
        fields: { guardrail_name: 'input_validation', triggered: false, blocking: true },
        startedAt: rootStart,
      });
    }
    this.spawned.follow(deadline.signal);
    this.place.until(deadline.signal);
    try {
      // Spawned children a dead execution left running go on under this one.
      if (this.startSeq > 0) await this.resumeSpawned(root);
      if (wf.checkpoint?.state === 'rejected' && !cancelling) {
        throw new AppError(
          'CHECKPOINT_REJECTED',
          `rejected at the human checkpoint: ${wf.checkpoint.reason ?? 'no reason given'}`,
        );
      }
      const output = await this.runNode(this.definition.root, deadline.signal, root);
      await this.spawned.settledWithin(this.place);
      // Stopped while it waited for its spawned children (shutdown, cancel, deadline): they did not
      // finish, so neither did this run.
      if (deadline.signal.aborted) throw deadline.signal.reason;
      this.journal.closeSpan(root, 'ok');
      await this.finish('completed', output, null);
    } catch (err) {
      // Nothing the run started outlives it: spawned children stop with the reason it stops.
      this.spawned.stop(isShutdown(err) || isCancellation(err) ? (err as AppError) : cancelledError());
      await this.spawned.settledWithin(this.place);
      if (isShutdown(err)) {
        this.journal.closeSpan(root, 'interrupted');
        await this.journal.commit();
        throw err;
      }
      const error = this.errorInfo(err);
      this.journal.closeSpan(root, 'error', err);
      await this.finish(isCancellation(err) ? 'cancelled' : 'failed', null, error);
    } finally {
      deadline.dispose();
      this.deadlines.close();
      parentSignal?.removeEventListener('abort', onParentAbort);
    }
    await this.journal.commit();
  }

  /**
   * A critical workflow before its approval (docs/design.md#complexity-allocation-selection-and-review): it stays
   * idle; its first execution says
   * why with a `checkpoint` event, later ones (after a restart) only leave it waiting.
   */
  private async awaitApproval(): Promise<void> {
    if (this.startSeq > 0) return;
    this.journal.emit(null, {
      type: 'checkpoint',
      payload: {
        state: 'pending',
        complexity: this.complexity,
        reason: 'critical complexity: POST /v1/workflows/{id}/approve or …/reject',
      },
    });
    await this.journal.commit();
  }

  private async resumeSpawned(parentSpan: string): Promise<void> {
    const attached = new Set<string>();
    for (const node of this.nodes.values()) if (node.childWorkflowId) attached.add(node.childWorkflowId);
    for (const child of await this.services.store.unfinishedChildren(this.workflow.id)) {
      if (!attached.has(child.id)) this.spawned.launch(child, parentSpan);
    }
  }

  /**
   * The attempt loop of one node (docs/design.md#execution, docs/design.md#reflection-and-retries): run its handler,
   * record the result, retry when told.
   */
  private async runNode(node: WorkflowNode, signal: AbortSignal, parentSpan: string): Promise<unknown> {
    const record = this.byName.get(node.name);
    if (!record) throw new AppError('INTERNAL', `node "${node.name}" has no record`);
    if (record.status === 'completed') return record.output;
    if (record.status === 'failed' && node.optional) return null;
    const final = this.reopening?.finalFailure(record);
    if (final) throw final;
    if (signal.aborted) throw signal.reason;
    if (this.services.isStopping()) throw shuttingDownError();

    const { clock } = this.services;
    const { journal } = this;
    const handler = handlerOf(node);
    if (this.reopening?.take(record)) {
      const failed: NodeAttempt = { record, signal, attempt: record.attempts, parentSpan };
      await handler.reflectOnRequest?.(this.context, node, failed, this.reopening.request.reason);
      await journal.commit();
    }
    for (;;) {
      const startedAt = clock.now();
      const attempt = record.attempts + 1;
      const at: NodeAttempt = { record, signal, attempt, parentSpan };
      journal.patchNode(record, { status: 'running', attempts: attempt, startedAt, endedAt: null, error: null });
      journal.emit(record.id, { type: 'stepStart', payload: { node: node.name, type: node.type, attempt } });
      journal.commitSoon();
      try {
        const output = await handler.run(this.context, node, at);
        const endedAt = clock.now();
        this.reflections.settleNode(record.id, true);
        journal.patchNode(record, { status: 'completed', output, endedAt });
        journal.emit(record.id, {
          type: 'stepEnd',
          payload: { node: node.name, status: 'completed', attempt, durationMs: endedAt - startedAt },
        });
        // A durable result (a model's answer) is committed before the run moves on: no second model
        // call after a crash. Any other rides along with the next commit.
        if (handler.durable) await journal.commit();
        else journal.commitSoon();
        return output;
      } catch (err) {
        if (isShutdown(err)) throw err;
        const endedAt = clock.now();
        const status: Status = isCancellation(err) ? 'cancelled' : 'failed';
        const error = this.errorInfo(err);
        this.reflections.settleNode(record.id, false);
        this.turns.forget(record.id);
        journal.patchNode(record, { status, error, endedAt });
        if (status === 'failed' && typeof err === 'object' && err !== null && !this.reported.has(err)) {
          this.reported.add(err);
          journal.emit(record.id, { type: 'error', payload: { node: node.name, attempt, ...error } });
        }
        const retry =
          status === 'failed' && !signal.aborted && handler.retry !== undefined
            ? await handler.retry(this.context, node, at, err)
            : false;
        journal.emit(record.id, {
          type: 'stepEnd',
          payload: { node: node.name, status, attempt, durationMs: endedAt - startedAt, error, retry },
        });
        await journal.commit();
        if (retry) {
          const delayMs = this.reflections.retryDelayMs;
          if (delayMs > 0) await clock.sleep(delayMs, signal);
          continue;
        }
        if (status === 'failed' && node.optional) return null;
        throw err;
      }
    }
  }

  /** The terminal state, its workflowEnd event, efficiency record and reward: one commit (the caller commits). */
  private async finish(status: Status, output: unknown, error: ErrorInfo | null): Promise<void> {
    const now = this.services.clock.now();
    if (status === 'cancelled') {
      for (const node of this.nodes.values()) {
        if (node.status === 'idle' || node.status === 'running') {
          this.journal.patchNode(node, { status: 'cancelled', endedAt: now });
        }
      }
    }
    this.journal.patchWorkflow({ status, output, error, endedAt: now });
    const durationMs = now - (this.workflow.startedAt ?? now);
    this.journal.emit(null, { type: 'workflowEnd', payload: { status, durationMs, ...(error ? { error } : {}) } });
    try {
      await this.recordMetrics(now);
    } catch (err) {
      // Observability must never keep a workflow from ending: report and finish without a record.
      this.services.onError(err, { workflowId: this.workflow.id, during: 'efficiency record' });
    }
  }

  /**
   * The efficiency record and reward (docs/design.md#events-spans-metrics-and-rewards), computed from the whole
   * history of the run.
   */
  private async recordMetrics(endedAt: number): Promise<void> {
    // A resumed run reads what earlier executions committed; a fresh one has it all in memory.
    const earlier = this.startSeq > 0 ? await this.services.store.events(this.workflow.id, 0, this.startSeq) : [];
    const { events, reflections } = withPending(
      { events: [...earlier, ...this.journal.emitted], reflections: this.reflections.history },
      { reflections: this.reflections.recorded, reflectionOutcomes: this.reflections.outcomes },
    );
    const metrics = metricsChanges({
      workflow: this.workflow,
      nodes: [...this.nodes.values()],
      events,
      reflections,
      endedAt,
      children: await this.childRecords(),
      parallelAllowed: this.allocation?.parallel ?? true,
    });
    this.journal.addMetrics(metrics.efficiency, metrics.rewards);
  }

  /**
   * The efficiency records of every child workflow of this run, declared or spawned by a model (both
   * end before it, so their records are committed): the `subtree` roll-up counts each descendant once.
   */
  private async childRecords(): Promise<EfficiencyRecord[]> {
    const children = await this.services.store.children(this.workflow.id);
    const records = await Promise.all(
      children.map((child) => this.services.metrics.efficiency(this.workflow.tenantId, child.id)),
    );
    return records.filter((r): r is EfficiencyRecord => r !== undefined);
  }

  private errorInfo(err: unknown): ErrorInfo {
    if (!(err instanceof AppError)) this.services.onError(err, { workflowId: this.workflow.id });
    return toErrorInfo(err);
  }
}
