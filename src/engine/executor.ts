import type { ResponseCache } from '../domain/cache.js';
import type { WorkflowDefinition } from '../domain/definition.js';
import { DEFAULTS } from '../domain/definition.js';
import { AppError, ValidationError } from '../domain/errors.js';
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
  TraceStore,
  WorkflowStore,
  WorkQueue,
} from '../domain/ports.js';
import type { WorkflowRecord } from '../domain/records.js';
import { redactSecrets } from '../domain/redact.js';
import { isTerminal } from '../domain/status.js';
import type { ToolRegistry } from '../tools/registry.js';
import { resolveAgents } from './agent-resolution.js';
import { routingOf } from './allocation-of.js';
import { redactDefinition } from './definition-redaction.js';
import { checkDefinition } from './definition-rules.js';
import { planWorkflow } from './plan.js';
import { shareIdenticalSchemas } from './response-format.js';
import { Run, type RunStart } from './run.js';
import { createSemaphore } from './semaphore.js';
import { type CorpusReader, cancelledError, type EngineServices, isShutdown, shuttingDownError } from './services.js';
import { SpawnLedger } from './spawn-ledger.js';
import type { RetryPolicy } from './transport-retry.js';

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
  /** Registered agents prompts may name or select among (DESIGN §3, §8), settled at submission. */
  agents: AgentRegistry;
  /** Thompson sampling's random source. */
  random: RandomSource;
  /** Global limit of concurrent model calls (CONCURRENCY). */
  concurrency: number;
  retry: RetryPolicy;
  /** Bytes one prompt node's answer may have (MAX_NODE_OUTPUT_BYTES). */
  maxNodeOutputBytes: number;
  /** Bytes one node's conversation may reach (MAX_CONVERSATION_BYTES). */
  maxConversationBytes: number;
  onError: (err: unknown, context: Record<string, unknown>) => void;
}

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export function createExecutor(options: ExecutorOptions): Executor {
  const { store, queue, clock } = options;
  const active = new Map<string, Run>();
  /** Ids picked from the queue whose run may not be registered yet. */
  const claimed = new Set<string>();
  const cancelRequested = new Set<string>();
  /** Created here and waiting in the queue; bounded by the queue's length. */
  const justSubmitted = new Map<string, NewWorkflow>();
  let stopping = false;
  let pruneTimer: NodeJS.Timeout | undefined;

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
    maxConversationBytes: options.maxConversationBytes,
    isStopping: () => stopping,
    spawns: new SpawnLedger(DEFAULTS.spawnsPerMinute, () => clock.now()),
    runChild: (child, parentSignal, parentSpan) => execute(child, parentSignal, undefined, parentSpan),
    onError: options.onError,
  };

  /** Every corpus a retrieval names is one of the tenant's (checked again when the prompt runs). */
  async function checkCorpora(tenantId: string, corpora: ReadonlyMap<string, string>): Promise<void> {
    const issues: Array<{ path: string; message: string }> = [];
    for (const [corpus, path] of corpora) {
      if (!(await options.corpora.get(tenantId, corpus)))
        issues.push({ path, message: `you have no corpus "${corpus}"` });
    }
    const first = issues[0];
    if (first) throw new ValidationError(`${first.path}: ${first.message}`, issues);
  }

  async function execute(
    workflow: WorkflowRecord,
    parentSignal?: AbortSignal,
    loaded?: RunStart,
    parentSpan: string | null = null,
  ): Promise<WorkflowRecord> {
    if (isTerminal(workflow.status)) return workflow;
    const start = loaded ?? (await load(workflow.id));
    // Spans left open by an execution that died (crash, shutdown) end `interrupted` (DESIGN §9).
    if (!loaded) await options.traces.interruptOpenSpans(workflow.id, clock.now());
    const run = new Run(workflow, start, services);
    active.set(workflow.id, run);
    try {
      await run.execute(parentSignal, cancelRequested.has(workflow.id), parentSpan);
    } finally {
      active.delete(workflow.id);
      if (isTerminal(run.workflow.status)) cancelRequested.delete(workflow.id);
    }
    return run.workflow;
  }

  async function load(workflowId: string) {
    const [nodes, lastSeq, reflections, requestsSent] = await Promise.all([
      store.nodes(workflowId),
      store.lastSeq(workflowId),
      store.reflections(workflowId),
      store.requestsSent(workflowId),
    ]);
    return { nodes, lastSeq, reflections, requestsSent };
  }

  async function runQueued(workflowId: string): Promise<void> {
    claimed.add(workflowId);
    try {
      // A workflow submitted to this process runs from the records it was created with: no re-read.
      const submitted = justSubmitted.get(workflowId);
      justSubmitted.delete(workflowId);
      if (submitted) await execute(submitted.workflow, undefined, { nodes: submitted.nodes, lastSeq: 0 });
      else {
        const workflow = await store.getById(workflowId);
        if (workflow && !isTerminal(workflow.status)) await execute(workflow);
      }
    } catch (err) {
      if (!isShutdown(err)) options.onError(err, { workflowId });
    } finally {
      claimed.delete(workflowId);
    }
  }

  return {
    get running() {
      return active.size;
    },

    async submit(tenantId, submitted, idempotency) {
      if (stopping) throw shuttingDownError();
      // Registered agents and selections first: the rules then check what the run will use.
      const resolution = await resolveAgents(tenantId, submitted, { agents: options.agents, random: options.random });
      const definition = resolution.definition;
      shareIdenticalSchemas(definition.root);
      const references = checkDefinition(definition, {
        models: options.models,
        toolNames: new Set(options.tools.names()),
        defaultModel: options.models.defaultModel,
      });
      await checkCorpora(tenantId, references.corpora);
      const now = clock.now();
      const planned = planWorkflow(redactDefinition(definition), { tenantId, now });
      // A critical task waits for a person (DESIGN §8): created idle, its run only announces the wait.
      if (routingOf(definition).allocation?.human_checkpoint) {
        planned.workflow.checkpoint = { state: 'pending', reason: null, at: null };
      }
      if (resolution.uses.length > 0) {
        const workflowId = planned.workflow.id;
        planned.agentUses = resolution.uses.map((use) => ({ ...use, workflowId, tenantId, createdAt: now }));
      }
      const claim = idempotency && { ...idempotency, notBefore: now - IDEMPOTENCY_TTL_MS };
      const result = await store.create(planned, claim);
      if (result.kind === 'created') {
        // The run mutates its records; the caller keeps an untouched copy (its 202 says `idle`).
        justSubmitted.set(result.workflow.id, { workflow: { ...planned.workflow }, nodes: planned.nodes });
        queue.enqueue(result.workflow.id, tenantId);
      }
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
      // Not picked up yet: settle it now rather than leave a cancelled workflow waiting in the queue.
      if (!active.has(workflowId) && !claimed.has(workflowId) && workflow.parentWorkflowId === null) {
        justSubmitted.delete(workflowId);
        await execute({ ...workflow, cancelRequested: true });
      }
      return store.get(tenantId, workflowId);
    },

    async decide(tenantId, workflowId, { state, reason }) {
      if (stopping) throw shuttingDownError();
      const workflow = await store.get(tenantId, workflowId);
      if (!workflow) return undefined;
      if (workflow.checkpoint?.state !== 'pending' || isTerminal(workflow.status)) {
        const now = workflow.checkpoint ? `its checkpoint is ${workflow.checkpoint.state}` : 'it has no checkpoint';
        throw new AppError('CONFLICT', `workflow ${workflowId} is not waiting for approval: ${now}`);
      }
      // The person's note is free text kept in the row and the checkpoint event: redacted (DESIGN §13).
      const kept = reason === null ? null : redactSecrets(reason);
      await store.commit({ workflows: [{ id: workflowId, checkpoint: { state, reason: kept, at: clock.now() } }] });
      queue.enqueue(workflowId, tenantId);
      return store.get(tenantId, workflowId);
    },

    async start() {
      stopping = false;
      // Idempotency keys are kept 24 h (DESIGN §4); older ones are dropped hourly so the table stays bounded.
      const prune = () =>
        store.pruneIdempotencyKeys(clock.now() - IDEMPOTENCY_TTL_MS).catch((err) => options.onError(err, {}));
      void prune();
      clearInterval(pruneTimer);
      pruneTimer = setInterval(prune, 60 * 60 * 1000);
      pruneTimer.unref();
      queue.start(runQueued);
      for (const { id, tenantId } of await store.resumable()) queue.enqueue(id, tenantId);
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
