import type { Allocation } from '../../domain/allocation.js';
import {
  type AgentConfig,
  agentNamed,
  type PromptNode,
  type WorkflowDefinition,
  type WorkflowNode,
} from '../../domain/definition.js';
import { AppError, type ErrorInfo, toErrorInfo } from '../../domain/errors.js';
import type { RunningPlace } from '../../domain/ports.js';
import type { NodeRecord, WorkflowRecord } from '../../domain/records.js';
import type { Status } from '../../domain/status.js';
import type { Complexity } from '../../domain/task.js';
import type { TemplateScope } from '../../domain/templates.js';
import { cancelledError, isCancellation, isShutdown, shuttingDownError } from '../errors.js';
import type { Limits, NodeAttempt, RunView } from '../node-context.js';
import { handlerOf } from '../nodes/table.js';
import { routingOf } from '../submission/routing.js';
import { agentSlots } from './agent-slots.js';
import { limitsOf, type RunStart, type RunWiring, templateScopeOf, wireRun } from './context.js';
import { followedController, RunDeadlines } from './deadline.js';
import type { RunJournal } from './journal.js';
import { Reopening } from './reopening.js';
import { finishRun } from './run-end.js';
import { announceApprovalWait, beginRun, resumeOrphanedSpawns, workflowDeadline } from './run-start.js';
import type { EngineServices } from './services.js';

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
  private readonly controller = followedController();
  private readonly deadlines: RunDeadlines;
  private readonly journal: RunJournal;
  /**
   * What the node kinds see (context.ts): the NodeContext, the reflection ledger, the turn log, the
   * children the agents spawned (the run ends after them) and the running place this execution holds.
   */
  private readonly wired: RunWiring;
  private readonly reported = new WeakSet<object>();
  private readonly startSeq: number;
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
    this.limits = limitsOf(this.definition, services);
    // Settled when the workflow was planned; a row stored before migration 0027 has none yet.
    ({ complexity: this.complexity, allocation: this.allocation } = workflow.routing ?? routingOf(this.definition));
    this.templateScope = templateScopeOf(this.definition, this.byName);
    this.startSeq = start.lastSeq;
    this.reopening =
      start.reflectionRequest && new Reopening(start.reflectionRequest, this.nodes, start.reflections ?? []);
    this.deadlines = new RunDeadlines(services.clock);
    this.wired = wireRun(this, start, services, {
      agents: agentSlots(this.allocation),
      deadlines: this.deadlines,
      signal: this.controller.signal,
      place,
      runNode: (node, signal, parentSpan) => this.runNode(node, signal, parentSpan),
    });
    this.journal = this.wired.journal;
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
    else if (wf.checkpoint?.state === 'pending') {
      return announceApprovalWait(this.journal, this.complexity, this.startSeq);
    }
    const onParentAbort = () => this.controller.abort(parentSignal?.reason);
    if (parentSignal?.aborted) onParentAbort();
    else parentSignal?.addEventListener('abort', onParentAbort, { once: true });

    const startedAt = wf.startedAt ?? clock.now();
    const reopenedAt = this.reopening?.request.requestedAt;
    const deadline = workflowDeadline(this.deadlines, this.controller.signal, this.definition, {
      startedAt,
      reopenedAt,
      now: clock.now(),
    });
    const root = beginRun(this.journal, wf, { complexity: this.complexity, startedAt, parentSpan, clock });
    this.wired.spawned.follow(deadline.signal);
    this.wired.place.until(deadline.signal);
    try {
      // Spawned children a dead execution left running go on under this one.
      if (this.startSeq > 0)
        await resumeOrphanedSpawns(wf.id, this.nodes.values(), this.services.store, this.wired.spawned, root);
      if (wf.checkpoint?.state === 'rejected' && !cancelling) {
        throw new AppError(
          'CHECKPOINT_REJECTED',
          `rejected at the human checkpoint: ${wf.checkpoint.reason ?? 'no reason given'}`,
        );
      }
      const output = await this.runNode(this.definition.root, deadline.signal, root);
      await this.wired.spawned.settledWithin(this.wired.place);
      // Stopped while it waited for its spawned children (shutdown, cancel, deadline): they did not
      // finish, so neither did this run.
      if (deadline.signal.aborted) throw deadline.signal.reason;
      this.journal.closeSpan(root, 'ok');
      await this.finish('completed', output, null);
    } catch (err) {
      // Nothing the run started outlives it: spawned children stop with the reason it stops.
      this.wired.spawned.stop(isShutdown(err) || isCancellation(err) ? (err as AppError) : cancelledError());
      await this.wired.spawned.settledWithin(this.wired.place);
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
      await handler.reflectOnRequest?.(this.wired.context, node, failed, this.reopening.request.reason);
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
        const output = await handler.run(this.wired.context, node, at);
        const endedAt = clock.now();
        this.wired.reflections.settleNode(record.id, true);
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
        this.wired.reflections.settleNode(record.id, false);
        this.wired.turns.forget(record.id);
        journal.patchNode(record, { status, error, endedAt });
        if (status === 'failed' && typeof err === 'object' && err !== null && !this.reported.has(err)) {
          this.reported.add(err);
          journal.emit(record.id, { type: 'error', payload: { node: node.name, attempt, ...error } });
        }
        const retry =
          status === 'failed' && !signal.aborted && handler.retry !== undefined
            ? await handler.retry(this.wired.context, node, at, err)
            : false;
        journal.emit(record.id, {
          type: 'stepEnd',
          payload: { node: node.name, status, attempt, durationMs: endedAt - startedAt, error, retry },
        });
        await journal.commit();
        if (retry) {
          const delayMs = this.wired.reflections.retryDelayMs;
          if (delayMs > 0) await clock.sleep(delayMs, signal);
          continue;
        }
        if (status === 'failed' && node.optional) return null;
        throw err;
      }
    }
  }

  /** The terminal state, its workflowEnd event, efficiency record and reward: one commit (the caller commits). */
  private finish(status: Status, output: unknown, error: ErrorInfo | null): Promise<void> {
    const { workflow, journal, allocation, startSeq } = this;
    const nodes = [...this.nodes.values()];
    const run = { workflow, journal, allocation, startSeq, nodes, reflections: this.wired.reflections };
    return finishRun({ ...run, endedAt: this.services.clock.now() }, { status, output, error }, this.services);
  }

  private errorInfo(err: unknown): ErrorInfo {
    if (!(err instanceof AppError)) this.services.onError(err, { workflowId: this.workflow.id });
    return toErrorInfo(err);
  }
}
