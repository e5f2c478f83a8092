import type { ResponseCache } from '../domain/cache.js';
import type { WorkflowDefinition } from '../domain/definition.js';
import { DEFAULTS } from '../domain/definition.js';
import { AppError } from '../domain/errors.js';
import type {
  AgentRegistry,
  Clock,
  CreateResult,
  EngagementStore,
  EventBus,
  MetricsStore,
  ModelCatalog,
  NewWorkflow,
  RandomSource,
  RunningPlace,
  TraceStore,
  UsageAnalyticsStore,
  WorkflowStore,
  WorkQueue,
} from '../domain/ports.js';
import { IDEMPOTENCY_TTL_MS } from '../domain/ports.js';
import type { WorkflowRecord } from '../domain/records.js';
import { redactSecrets } from '../domain/redact.js';
import { isTerminal } from '../domain/status.js';
import type { ToolRegistry } from '../tools/registry.js';
import { cancelledError, isShutdown, leaseLostError, resumeAtOf, shuttingDownError } from './errors.js';
import { createReflectionDesk, type ReflectionDesk, type ReflectionState } from './reflection-desk.js';
import type { RunStart } from './run/context.js';
import { Run } from './run/run.js';
import { createSemaphore } from './run/semaphore.js';
import type { CorpusReader, EngineServices } from './run/services.js';
import { SpawnLedger } from './run/spawn-ledger.js';
import { TenantSpend } from './run/tenant-spend.js';
import type { RetryPolicy } from './run/transport-retry.js';
import { TreeBudgets } from './run/tree-budgets.js';
import type { CostAwareDefaults } from './submission/agent-resolution.js';
import { prepareSubmission } from './submission/submit.js';

/** Submissions kept to run from memory (createExecutor's justSubmitted); beyond, a run reads its row. */
const JUST_SUBMITTED_MAX = 4096;

/** What the API layer asks of the engine. */
export interface Executor {
  /**
   * Validates the definition (shape already checked by zod; this applies the cross-field rules:
   * unique names, known agents/models/tools, template references, limits — throwing a
   * ValidationError whose `details` name each offending field), persists the workflow with its node
   * rows (and the idempotency key) in one transaction, then enqueues it.
   */
  submit(
    tenantId: string,
    definition: WorkflowDefinition,
    idempotency?: { key: string; bodyHash: string },
  ): Promise<CreateResult>;
  /** Sticky cancel of the workflow and its descendants; aborts in-flight calls. Undefined when not found for the tenant. */
  cancel(tenantId: string, workflowId: string): Promise<WorkflowRecord | undefined>;
  /**
   * Settles a waiting human checkpoint: approved, the workflow runs; rejected, it fails with the
   * reason. Undefined when not found for the tenant; AppError CONFLICT when it is not waiting.
   */
  decide(
    tenantId: string,
    workflowId: string,
    decision: { state: 'approved' | 'rejected'; reason: string | null },
  ): Promise<WorkflowRecord | undefined>;
  /**
   * A reflection asked for by hand on a failed prompt node (docs/workflows.md#reflection): reopens the failed
   * workflow in one conditional update and queues it; its run reflects on the node with the note
   * and runs the node once more. Undefined when the tenant has no such workflow; NotFoundError for
   * an unknown node; AppError CONFLICT when the node cannot be reflected on now.
   */
  reflect: ReflectionDesk['reflect'];
  /** The facts behind `reflect`'s checks, for the `GET …/reflection` read; undefined when not found for the tenant. */
  reflectionState(tenantId: string, workflowId: string): Promise<ReflectionState | undefined>;
  /** Resumes every non-terminal workflow and starts taking work. */
  start(): Promise<void>;
  /** Stops taking work, lets in-flight calls finish for up to `graceMs`, then aborts the rest (they resume at next start). */
  shutdown(graceMs: number): Promise<void>;
  /** Workflows currently executing in this process. */
  readonly running: number;
}

export interface ExecutorOptions {
  store: WorkflowStore;
  metrics: Pick<MetricsStore, 'efficiency'>;
  cache: ResponseCache;
  traces: TraceStore;
  bus: EventBus;
  queue: WorkQueue;
  models: ModelCatalog;
  clock: Clock;
  tools: ToolRegistry;
  /** Corpora searched by prompts with `retrieval`, and the engagement their `auto` guard reads. */
  corpora: CorpusReader;
  engagement: EngagementStore;
  /**
   * Registered agents prompts may name or select among (docs/design.md#workflow-definitions,
   * docs/design.md#complexity-allocation-selection-and-review), settled at submission.
   */
  agents: AgentRegistry;
  /** The top performing patterns planning prompts are shown, settled at submission (docs/analytics.md#successful-patterns). */
  usage: Pick<UsageAnalyticsStore, 'taskModels'>;
  /** Thompson sampling's random source. */
  random: RandomSource;
  /** COST_AWARE_DEFAULTS: a tenant's cost_aware tolerance and confidence. */
  costAwareDefaults?: CostAwareDefaults;
  /** Global limit of concurrent model calls (CONCURRENCY). */
  concurrency: number;
  retry: RetryPolicy;
  /** Bytes one prompt node's answer may have (MAX_NODE_OUTPUT_BYTES). */
  maxNodeOutputBytes: number;
  /** MAX_LLM_CALLS_PER_WORKFLOW: a submitted maxLlmCalls above it is refused (400). */
  maxLlmCallsPerWorkflow: number;
  /** TENANT_DAILY_BUDGET_USD; undefined: no money budget. */
  tenantDailyBudgetUsd?: number | undefined;
  /** Bytes one node's conversation may reach (MAX_CONVERSATION_BYTES). */
  maxConversationBytes: number;
  onError: (err: unknown, context: Record<string, unknown>) => void;
  /**
   * Whether this executor is its database's only one (default true): it prunes old idempotency
   * keys hourly and queues the unfinished workflows at start. Scaled out, a cluster cron prunes
   * and the leased queue claims what is unfinished (docs/operations.md#scale-out).
   */
  soleInstance?: boolean;
}

/** The true reason a decision was refused, told to the client that lost (or came too late). */
function whyNotWaiting(workflow: WorkflowRecord): string {
  const { checkpoint, status } = workflow;
  if (!checkpoint) return 'it has no checkpoint';
  if (status === 'cancelled' || workflow.cancelRequested) return 'it is cancelled';
  if (checkpoint.state !== 'pending') return `it was already ${checkpoint.state}`;
  return `it has already ended (${status})`;
}

export function createExecutor(options: ExecutorOptions): Executor {
  const { store, queue, clock } = options;
  const active = new Map<string, Run>();
  /**
   * Root executions started from the queue or by a cancel, by id, until they settle: a second one
   * waits for the first (ARCHITECTURE.md, workflow lifecycle), even before its run is registered.
   */
  const inFlight = new Map<string, Promise<void>>();
  const cancelRequested = new Set<string>();
  /**
   * Created here and waiting in the queue, to run from these records when the queue says nothing
   * touched the row since (its `untouched`). Scaled out, another instance may claim one instead
   * and this copy is never asked for: the oldest go first past JUST_SUBMITTED_MAX.
   */
  const justSubmitted = new Map<string, NewWorkflow>();
  let stopping = false;
  let pruneTimer: NodeJS.Timeout | undefined;

  const treeBudgets = new TreeBudgets(store, options.maxLlmCallsPerWorkflow);
  const services: EngineServices = {
    store,
    metrics: options.metrics,
    cache: options.cache,
    bus: options.bus,
    models: options.models,
    clock,
    tools: options.tools,
    corpora: options.corpora,
    engagement: options.engagement,
    llmSlots: createSemaphore(options.concurrency),
    retry: options.retry,
    maxNodeOutputBytes: options.maxNodeOutputBytes,
    maxLlmCallsPerWorkflow: options.maxLlmCallsPerWorkflow,
    spend: new TenantSpend(options.tenantDailyBudgetUsd, clock, store),
    maxConversationBytes: options.maxConversationBytes,
    isStopping: () => stopping,
    spawns: new SpawnLedger(DEFAULTS.spawnsPerMinute, () => clock.now()),
    runChild,
    onError: options.onError,
  };

  const desk = createReflectionDesk({
    store,
    queue,
    clock,
    spend: services.spend,
    maxLlmCallsPerWorkflow: options.maxLlmCallsPerWorkflow,
    isStopping: () => stopping,
  });

  /**
   * A child (declared or spawned) runs in a running place of its tenant like a root (docs/workflows.md#running-caps), taken ahead of roots waiting to start; its parent gave its own back if it only
   * waits. A child whose parent's signal aborts while it waits runs without one: it only records its end.
   */
  async function runChild(child: WorkflowRecord, parentSignal: AbortSignal, parentSpan: string) {
    if (isTerminal(child.status)) return child;
    const place = await queue.place(child.tenantId, parentSignal).catch(() => undefined);
    try {
      return await execute(child, parentSignal, undefined, parentSpan, place);
    } finally {
      place?.release();
    }
  }

  async function execute(
    workflow: WorkflowRecord,
    parentSignal?: AbortSignal,
    loaded?: RunStart,
    parentSpan: string | null = null,
    place?: RunningPlace,
  ): Promise<WorkflowRecord> {
    if (isTerminal(workflow.status)) return workflow;
    const start = loaded ?? (await load(workflow.id));
    // Spans left open by an execution that died (crash, shutdown) end `interrupted`
    // (docs/design.md#events-spans-metrics-and-rewards).
    if (!loaded) await options.traces.interruptOpenSpans(workflow.id, clock.now());
    // A root run from its submission's records has taken no request yet.
    const fresh = loaded !== undefined && loaded.lastSeq === 0 && workflow.parentWorkflowId === null;
    const tree = await treeBudgets.open(workflow, fresh ? 0 : undefined);
    const run = new Run(workflow, { ...start, treeBudget: tree.budget }, services, place);
    active.set(workflow.id, run);
    try {
      await run.execute(parentSignal, cancelRequested.has(workflow.id), parentSpan);
    } finally {
      tree.close();
      active.delete(workflow.id);
      if (isTerminal(run.workflow.status)) cancelRequested.delete(workflow.id);
    }
    return run.workflow;
  }

  async function load(workflowId: string) {
    const [nodes, lastSeq, reflections, requestsSent, reflectionRequest] = await Promise.all([
      store.nodes(workflowId),
      store.lastSeq(workflowId),
      store.reflections(workflowId),
      store.requestsSent(workflowId),
      store.reflectionRequest(workflowId),
    ]);
    return { nodes, lastSeq, reflections, requestsSent, reflectionRequest };
  }

  /** Runs `work` after any execution of the same root already in flight; never rejects. */
  function exclusively(workflowId: string, work: () => Promise<void>): Promise<void> {
    const guarded = async () => {
      try {
        await work();
      } catch (err) {
        if (!isShutdown(err)) options.onError(err, { workflowId });
      }
    };
    const prior = inFlight.get(workflowId);
    const mine = (prior ? prior.then(guarded) : guarded()).finally(() => {
      if (inFlight.get(workflowId) === mine) inFlight.delete(workflowId);
    });
    inFlight.set(workflowId, mine);
    return mine;
  }

  function runQueued(workflowId: string, place: RunningPlace, untouched: boolean): Promise<void> {
    // Taken now, not when a prior execution settles: a decision or cancel meanwhile drops it.
    const submitted = untouched ? justSubmitted.get(workflowId) : undefined;
    justSubmitted.delete(workflowId);
    return exclusively(workflowId, async () => {
      let tenantId = submitted?.workflow.tenantId ?? '';
      try {
        // A workflow submitted to this process runs from the records it was created with: no re-read.
        if (submitted)
          await execute(submitted.workflow, undefined, { nodes: submitted.nodes, lastSeq: 0 }, null, place);
        else tenantId = (await executeStored(workflowId, place)) ?? tenantId;
      } catch (err) {
        // A run that parked to wait (RUN_PARKED) is run again at its time.
        const at = resumeAtOf(err);
        if (at !== undefined) queue.resumeAt(workflowId, tenantId, at);
        throw err;
      }
    });
  }

  /**
   * Runs the stored row; without a place only to record an end (a cancel settled out of the
   * queue). Returns its tenant (undefined when there is no such row).
   */
  async function executeStored(workflowId: string, place?: RunningPlace): Promise<string | undefined> {
    const workflow = await store.getById(workflowId);
    if (workflow && !isTerminal(workflow.status)) await execute(workflow, undefined, undefined, null, place);
    return workflow?.tenantId;
  }

  return {
    get running() {
      return active.size;
    },

    async submit(tenantId, submitted, idempotency) {
      if (stopping) throw shuttingDownError();
      const planned = await prepareSubmission(tenantId, submitted, options, () => clock.now());
      const now = planned.workflow.createdAt;
      const claim = idempotency && { ...idempotency, notBefore: now - IDEMPOTENCY_TTL_MS };
      const result = await store.create(planned, claim);
      if (result.kind === 'created') {
        // The run mutates its records; the caller keeps an untouched copy (its 202 says `idle`).
        justSubmitted.set(result.workflow.id, { workflow: { ...planned.workflow }, nodes: planned.nodes });
        if (justSubmitted.size > JUST_SUBMITTED_MAX) justSubmitted.delete(justSubmitted.keys().next().value as string);
      }
      if (result.kind === 'created') queue.enqueue(result.workflow.id, tenantId);
      return result;
    },

    async cancel(tenantId, workflowId) {
      const workflow = await store.get(tenantId, workflowId);
      if (!workflow || isTerminal(workflow.status)) return workflow;
      const ids = await store.requestCancel(workflowId);
      for (const id of ids) {
        cancelRequested.add(id);
        active.get(id)?.abort(cancelledError());
      }
      // Scaled out, the tree may run on another instance: that one aborts its calls.
      queue.announceCancel(ids);
      if (workflow.parentWorkflowId === null) {
        // The copy taken at submission predates the cancel: whoever runs it next reads the row.
        justSubmitted.delete(workflowId);
        // Not picked up yet: settle it now rather than leave a cancelled workflow waiting in the
        // queue. An execution in flight sees the cancel, or (a run that only announced a
        // checkpoint) the queue runs it once more after it ends, and that run settles the cancel.
        // Scaled out, the instance running it settles it instead.
        if (inFlight.has(workflowId)) queue.enqueue(workflowId, tenantId);
        else {
          await exclusively(workflowId, async () => {
            if (await queue.runHere(workflowId, async () => void (await executeStored(workflowId)))) return;
            for (const id of ids) if (!active.has(id)) cancelRequested.delete(id);
          });
        }
      }
      return store.get(tenantId, workflowId);
    },

    async decide(tenantId, workflowId, { state, reason }) {
      if (stopping) throw shuttingDownError();
      // The person's note is free text kept in the row and the checkpoint event: redacted (docs/design.md#security).
      const kept = reason === null ? null : redactSecrets(reason);
      // One conditional update: of racing decisions (or a decision and a cancel) exactly one wins.
      const outcome = await store.decideCheckpoint(tenantId, workflowId, { state, reason: kept, at: clock.now() });
      if (!outcome) return undefined;
      if (!outcome.decided) {
        throw new AppError(
          'CONFLICT',
          `workflow ${workflowId} is not waiting for approval: ${whyNotWaiting(outcome.workflow)}`,
        );
      }
      // The copy taken at submission still says pending: the run reads the decided row instead. A
      // run in flight (the one announcing the wait) is followed by one more, never lost, never doubled.
      justSubmitted.delete(workflowId);
      queue.enqueue(workflowId, tenantId);
      return outcome.workflow;
    },

    reflect: (tenantId, workflowId, nodeId, note) => desk.reflect(tenantId, workflowId, nodeId, note),

    reflectionState: (tenantId, workflowId) => desk.state(tenantId, workflowId),

    async start() {
      stopping = false;
      // Idempotency keys are kept 24 h (docs/design.md#execution); older ones are dropped hourly so the table stays
      // bounded.
      const prune = () =>
        store.pruneIdempotencyKeys(clock.now() - IDEMPOTENCY_TTL_MS).catch((err) => options.onError(err, {}));
      clearInterval(pruneTimer);
      const sole = options.soleInstance ?? true;
      if (sole) {
        void prune();
        pruneTimer = setInterval(prune, 60 * 60 * 1000);
        pruneTimer.unref();
      }
      queue.start(runQueued, {
        lost(rootWorkflowId) {
          justSubmitted.delete(rootWorkflowId);
          for (const run of active.values()) {
            if (run.workflow.rootWorkflowId === rootWorkflowId) run.abort(leaseLostError());
          }
        },
        cancelled(ids) {
          // The flag is durable before the notice is sent: a run that reads its row later sees it.
          for (const id of ids) {
            justSubmitted.delete(id);
            const run = active.get(id);
            if (run) {
              cancelRequested.add(id);
              run.abort(cancelledError());
            } else if (inFlight.has(id)) {
              // Claimed here and starting: its run is not registered yet, and takes the flag from here.
              cancelRequested.add(id);
            }
          }
        },
      });
      if (sole) for (const { id, tenantId } of await store.resumable()) queue.enqueue(id, tenantId);
    },

    async shutdown(graceMs) {
      stopping = true;
      clearInterval(pruneTimer);
      const drained = queue.stop();
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      });
      await Promise.race([drained, grace]);
      clearTimeout(timer);
      for (const run of active.values()) run.abort(shuttingDownError());
      await drained;
    },
  };
}
