import type { AgentRunSums, AgentUse, RegisteredAgent, SavingsSums, SelectionFilter, StrategySums } from './agents.js';
import type { AddDocumentsResult, ChunkHit, CorpusRecord, NewCorpus, NewDocument } from './corpus.js';
import type { AgentConfig, WorkflowDefinition } from './definition.js';
import type { WorkflowEvent } from './events.js';
import type { LlmRequest, LlmResponse, TokenUsage } from './llm.js';
import type {
  EfficiencyRecord,
  EfficiencySums,
  Feedback,
  FeedbackAction,
  RewardRecord,
  RewardSums,
  UsageTier,
} from './metrics.js';
import type { AgentRole } from './names.js';
import type { Checkpoint, NodePatch, NodeRecord, WorkflowPatch, WorkflowRecord } from './records.js';
import type { ReflectionEntry, ReflectionRequest } from './reflection.js';
import type { GenerationUsage, SpanWrite, TraceFilter, TraceRecord, TraceSummary } from './spans.js';
import type { Status } from './status.js';
import type { Complexity } from './task.js';
import type { EngagementFilter, EngagementSums, RetrievalRunRecord, ToolCallRecord } from './tool-analytics.js';
import type { DashboardSums, ModelSums, TaskModelGroup, ToolCallSums, UsageWindow } from './usage-analytics.js';

/**
 * The ports: what the engine and the API need from the outside world. Adapters implement them;
 * only deps.ts chooses which. All storage ports are async so a PostgreSQL adapter fits later
 * (docs/design.md#architecture-and-floors, docs/design.md#scale-out).
 */

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms`, or rejects with `signal.reason` when the signal aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface LlmProvider {
  complete(request: LlmRequest, options: { signal: AbortSignal }): Promise<LlmResponse>;
  /**
   * The answer to this request was served from the response cache instead: move any per-request
   * state (the simulated provider's script position) as if it had been called (docs/design.md#providers-and-models).
   */
  replayed?(request: LlmRequest): void;
}

/** A model spec (`sim/sonnet`, `anthropic/claude-…`, or a tier) resolved to a provider. */
export interface ResolvedModel {
  /** `provider/model`, as recorded in events and metrics. */
  id: string;
  provider: string;
  /** The provider's own id, sent in the request. */
  providerModel: string;
  simulated: boolean;
  client: LlmProvider;
}

/** Where in a node's conversation a spawn was asked for: what identifies it across a replay. */
export interface SpawnSlot {
  conversation: string;
  turn: number;
  /** The tool call's index in its turn (0-based). */
  call: number;
}

/**
 * Starts child workflows under a node of the calling workflow (docs/design.md#architecture-and-floors): a `workflow`
 * node, and
 * later a tool (`request_spawn_workflow`) or a review node, reach the engine only through this port.
 * The child inherits the tenant, the trace and the correlation id; cancelling the parent cancels it.
 */
export interface ChildLauncher {
  /**
   * Creates the child workflow under `nodeId` (its rows committed with the parent's journal) and
   * returns its record; limits of the parent's tree (depth, children, descendants) are checked here.
   */
  create(request: { nodeId: string; definition: WorkflowDefinition }): Promise<WorkflowRecord>;
  /**
   * A child an agent asked for (`request_spawn_workflow`): created under `nodeId` without being
   * attached to it (a node may spawn several), its `spawnRequested` event and rows committed before
   * this resolves. Refuses (AppError LIMIT_EXCEEDED, naming the limit) past the tree's limits or the
   * spawn rate of its root. A node re-run after a crash replays the turn that was in flight, and its
   * model may word the request differently: a spawn at the same `slot` (conversation, turn, call) as
   * one a dead execution made under the node finds that child instead, each such child once;
   * `existing` then says so — the resumed run already runs it, or it has ended.
   */
  spawn(request: {
    nodeId: string;
    definition: WorkflowDefinition;
    requestedName: string;
    slot: SpawnSlot;
  }): Promise<{ workflow: WorkflowRecord; existing: boolean }>;
  /** A child created by an earlier execution (a resumed run finds it instead of creating another). */
  find(childId: string): Promise<WorkflowRecord>;
  /** Runs a child (created now or found after a restart) to a terminal state under the parent's signal. */
  run(child: WorkflowRecord, signal: AbortSignal, parentSpan: string): Promise<WorkflowRecord>;
}

/** USD per million tokens. */
export interface ModelPriceInfo {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** What GET /v1/models shows: the configured providers, the tiers and the prices in force. */
export interface ModelCatalogInfo {
  providers: Array<{ name: string; configured: boolean; simulated: boolean }>;
  defaultModel: string;
  tiers: Array<{ tier: 'haiku' | 'sonnet' | 'opus'; model: string; price: ModelPriceInfo }>;
  /** MODEL_PRICES entries, by model id. */
  prices: Array<{ model: string; price: ModelPriceInfo }>;
}

/**
 * What a model id may be labelled by where anyone can read it (Prometheus): a known provider or
 * `other`, and a tier. Never the id itself: `sim/<anything>` is accepted, so ids are client text.
 */
export interface ModelClass {
  provider: string;
  tier: UsageTier;
}

export interface ModelCatalog {
  /** Throws AppError UNKNOWN_MODEL / PROVIDER_NOT_CONFIGURED. */
  resolve(spec: string): ResolvedModel;
  classOf(modelId: string): ModelClass;
  costUsd(modelId: string, usage: TokenUsage): number;
  describe(): ModelCatalogInfo;
  readonly defaultModel: string;
}

/** A new workflow with all its node rows, written in one transaction. */
export interface NewWorkflow {
  workflow: WorkflowRecord;
  nodes: NodeRecord[];
  /** Registered and selected agents its prompts use (root workflows, at submission). */
  agentUses?: AgentUse[];
}

/** Everything one engine step changes, committed atomically (docs/design.md#execution durability). */
export interface ChangeSet {
  /**
   * The root workflow whose execution made these changes. Scaled out (docs/operations.md#scale-out)
   * they are written only while this instance holds that root's lease at its epoch (fencing).
   */
  root?: string;
  newWorkflows?: NewWorkflow[];
  workflows?: WorkflowPatch[];
  nodes?: NodePatch[];
  events?: WorkflowEvent[];
  /**
   * New reflection entries (docs/design.md#three-levels-of-reflection), committed with the node result they belong to.
   */
  reflections?: ReflectionEntry[];
  /** `success` of earlier entries, set once the attempt that followed them finished. */
  reflectionOutcomes?: Array<{ id: string; success: boolean }>;
  /**
   * Efficiency records of workflows that ended (docs/design.md#events-spans-metrics-and-rewards), committed with their
   * final state.
   */
  efficiency?: TenantEfficiencyRecord[];
  /** Reward records, inserted or replaced (upsert by workflow). */
  rewards?: TenantRewardRecord[];
  /** Span inserts and ends (docs/design.md#events-spans-metrics-and-rewards), in order, committed with the node they belong to. An end
   * only closes an open span: a second end of the same span is ignored. */
  spans?: SpanWrite[];
  /** What those span writes add to their workflows' generation usage (the engine's SpanRecorder
   * counts it): summed by `TraceStore.generationUsage` without reading the spans back. */
  usage?: GenerationUsage[];
  /** Tool calls made in this change set's steps (docs/design.md#agent-tools analytics). */
  toolCalls?: ToolCallRecord[];
  /** Prompt runs with `retrieval` that ended in this change set: how the model engaged. */
  retrievalRuns?: RetrievalRunRecord[];
  /** Provider requests a workflow tree took from its root's budget (added to the root's count). */
  requestsTaken?: Array<{ rootWorkflowId: string; count: number }>;
  /** Real money (USD, simulated cost excluded) tenants' calls cost, added to their UTC day's sum. */
  tenantSpend?: Array<{ tenantId: string; day: number; costUsd: number }>;
}

export interface WorkflowFilter {
  status?: Status;
  name?: string;
  correlationId?: string;
  parentWorkflowId?: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export type CreateResult =
  | { kind: 'created'; workflow: WorkflowRecord }
  | { kind: 'replayed'; workflow: WorkflowRecord }
  | { kind: 'conflict'; workflowId: string };

export interface IdempotencyClaim {
  key: string;
  bodyHash: string;
  /** Keys older than this (epoch ms) are treated as absent. */
  notBefore: number;
}

export interface WorkflowStore {
  /** Inserts the workflow, its nodes and (when given) the idempotency key in one transaction. */
  create(workflow: NewWorkflow, idempotency?: IdempotencyClaim): Promise<CreateResult>;
  commit(changes: ChangeSet): Promise<void>;
  /** Tenant-scoped: another tenant's workflow is `undefined`. */
  get(tenantId: string, id: string): Promise<WorkflowRecord | undefined>;
  /** Unscoped, for the engine. */
  getById(id: string): Promise<WorkflowRecord | undefined>;
  list(tenantId: string, filter: WorkflowFilter, cursor: string | null, limit: number): Promise<Page<WorkflowRecord>>;
  nodes(workflowId: string): Promise<NodeRecord[]>;
  /** Events with `seq > after`, in order. */
  events(workflowId: string, after: number, limit: number): Promise<WorkflowEvent[]>;
  lastSeq(workflowId: string): Promise<number>;
  /** Provider requests the workflow's finished model calls sent (Σ agentPromptEnd.requests): a resumed run's budget. */
  requestsSent(workflowId: string): Promise<number>;
  /** Provider requests the tree of this root took, each recorded before it was sent (ChangeSet.requestsTaken). */
  requestsTaken(rootWorkflowId: string): Promise<number>;
  /** What the tenant's provider calls cost in real money on the UTC day `day` (epoch ms / 86 400 000). */
  tenantSpendUsd(tenantId: string, day: number): Promise<number>;
  /** The workflow and every descendant workflow, flagged cancel-requested; returns their ids. */
  requestCancel(id: string): Promise<string[]>;
  /**
   * Settles a pending human checkpoint in one conditional update: only a workflow still idle, not
   * cancelled and pending changes, so racing decisions have one winner. The row after the attempt
   * and whether this call decided it; undefined when the tenant has no such workflow.
   */
  decideCheckpoint(
    tenantId: string,
    id: string,
    decision: Checkpoint,
  ): Promise<{ decided: boolean; workflow: WorkflowRecord } | undefined>;
  /**
   * Reopens a failed workflow for a reflection asked for by hand on one of its failed nodes and
   * records the request, in one conditional update: racing requests have one winner, and a node gets
   * at most `maxPerNode` requests. The row after the attempt and whether this call reopened it;
   * undefined when the tenant has no such workflow.
   */
  requestReflection(
    tenantId: string,
    request: ReflectionRequest,
    maxPerNode: number,
  ): Promise<{ reopened: boolean; workflow: WorkflowRecord } | undefined>;
  /** The workflow's newest reflection request: the one a reopened, non-terminal workflow runs for. */
  reflectionRequest(workflowId: string): Promise<ReflectionRequest | undefined>;
  /** Reflection requests made so far, by node id (nodes without one are absent). */
  reflectionRequestCounts(workflowId: string): Promise<Map<string, number>>;
  /** Root workflows (no parent) that are not terminal: the work to resume at start. */
  resumable(): Promise<Array<{ id: string; tenantId: string }>>;
  /** Deletes idempotency keys created before `before` (epoch ms); returns how many. */
  pruneIdempotencyKeys(before: number): Promise<number>;
  /** Children of a workflow and descendants of its root (spawn limits). */
  treeCounts(workflowId: string, rootWorkflowId: string): Promise<{ children: number; descendants: number }>;
  /** Child workflows of a parent that are not terminal (a resumed run waits for its spawned ones). */
  unfinishedChildren(parentWorkflowId: string): Promise<WorkflowRecord[]>;
  /** Every child workflow of a parent, declared (`workflow` nodes) or spawned by a model, oldest first. */
  children(parentWorkflowId: string): Promise<WorkflowRecord[]>;
  /** Unscoped (callers check the tenant through `get`): a workflow's reflection history, oldest first. */
  reflections(workflowId: string): Promise<ReflectionEntry[]>;
}

/**
 * Trace reads and span maintenance (docs/design.md#events-spans-metrics-and-rewards); span writes ride on
 * `WorkflowStore.commit`.
 */
export interface TraceStore {
  /** Closes every open span of that one workflow as `interrupted` at `at` (resume after a crash,
   * shutdown), through the group committer; returns how many it closed. */
  interruptOpenSpans(workflowId: string, at: number): Promise<number>;
  /** Tenant-scoped: another tenant's trace is `undefined`. */
  trace(tenantId: string, traceId: string): Promise<TraceRecord | undefined>;
  /** Newest first (by root workflow id). */
  traces(tenantId: string, filter: TraceFilter, cursor: string | null, limit: number): Promise<Page<TraceSummary>>;
  /** Per workflow of the trace, what its generation spans add up to so far (live while it runs). */
  generationUsage(tenantId: string, traceId: string): Promise<GenerationUsage[]>;
}

/** An efficiency record or a reward as the store keeps it: with the tenant it belongs to. */
export type TenantEfficiencyRecord = EfficiencyRecord & { tenant_id: string };
export type TenantRewardRecord = RewardRecord & { tenant_id: string };

/** Time range on the record's `completed_at` / `created_at`, epoch ms, both inclusive. */
export interface MetricsFilter {
  from?: number;
  to?: number;
  taskType?: string;
  complexity?: Complexity;
}

/** Efficiency records, rewards and feedback (docs/design.md#events-spans-metrics-and-rewards); records and rewards are written through
 * `WorkflowStore.commit` with the workflow's final state. Every read is tenant-scoped. */
/**
 * Retrieval engagement (docs/design.md#agent-tools): what the analytics, the auto guard and the audit's Tier 2 read.
 */
export interface EngagementStore {
  /** Per model and guarded/unguarded, the sums of a tenant's retrieval runs in the filter's window. */
  sums(tenantId: string, filter: EngagementFilter): Promise<EngagementSums[]>;
}

/**
 * The dashboard, tool and model analytics (docs/design.md#events-spans-metrics-and-rewards): sums over a tenant's
 * rows in a window, read
 * by indexed range scans (tenant + time). Every read is tenant-scoped.
 */
export interface UsageAnalyticsStore {
  dashboard(tenantId: string, window: UsageWindow): Promise<DashboardSums>;
  /** The dashboard's task type × model groups alone: what the top performing patterns are judged on. */
  taskModels(tenantId: string, window: UsageWindow): Promise<TaskModelGroup[]>;
  toolCalls(tenantId: string, window: UsageWindow): Promise<ToolCallSums>;
  models(tenantId: string, window: UsageWindow): Promise<ModelSums[]>;
}

export interface MetricsStore {
  efficiency(tenantId: string, workflowId: string): Promise<EfficiencyRecord | undefined>;
  /** Newest first; `cursor` is the previous page's nextCursor. */
  listEfficiency(
    tenantId: string,
    filter: MetricsFilter,
    cursor: string | null,
    limit: number,
  ): Promise<Page<EfficiencyRecord>>;
  /** Sums over the whole filtered window, by task type (for the averages: not one page's). */
  efficiencySums(tenantId: string, filter: MetricsFilter): Promise<Record<string, EfficiencySums>>;
  reward(tenantId: string, workflowId: string): Promise<RewardRecord | undefined>;
  /** Newest first; `cursor` is the previous page's nextCursor. */
  listRewards(
    tenantId: string,
    filter: Pick<MetricsFilter, 'from' | 'to'>,
    cursor: string | null,
    limit: number,
  ): Promise<Page<RewardRecord>>;
  /** Sums over the whole filtered window. */
  rewardSums(tenantId: string, filter: Pick<MetricsFilter, 'from' | 'to'>): Promise<RewardSums>;
  /**
   * Inserts the feedback and replaces the reward in one transaction. `recompute` receives every
   * action recorded for the workflow (this one's included) and the current reward, inside the
   * transaction, so concurrent feedback never loses an action. `undefined` (nothing written) when
   * the workflow has no reward.
   */
  addFeedback(
    tenantId: string,
    workflowId: string,
    feedback: Feedback,
    /** Epoch ms the feedback was received. */
    at: number,
    recompute: (actions: FeedbackAction[], current: RewardRecord) => RewardRecord,
  ): Promise<RewardRecord | undefined>;
}

export interface ApiKeyStore {
  /** Replaces the configured keys (hashes only) at boot. */
  sync(keys: Array<{ tenantId: string; keyHash: string }>): Promise<void>;
}

/** Keyset page request: `cursor` is the previous page's nextCursor (null for the first page). */
export interface PageRequest {
  cursor: string | null;
  limit: number;
}

/**
 * Retrieval corpora and their BM25 search (docs/design.md#agent-tools, docs/design.md#storage; limits in
 * domain/corpus.ts). Every
 * method is tenant-scoped: another tenant's corpus is absent (`undefined`, `false`, or AppError
 * NOT_FOUND), never visible. Limits answer AppError LIMIT_EXCEEDED naming the limit; a taken name
 * CONFLICT.
 */
export interface CorpusStore {
  create(tenantId: string, corpus: NewCorpus): Promise<CorpusRecord>;
  /** Newest first. */
  list(tenantId: string, page: PageRequest): Promise<Page<CorpusRecord>>;
  /** By id (`cp_…`) or by name. */
  get(tenantId: string, idOrName: string): Promise<CorpusRecord | undefined>;
  /**
   * Removes the corpus at once (its name is free again, searches find nothing); its documents and
   * chunks are purged in the background, in small commits. False when there is no such corpus.
   */
  delete(tenantId: string, id: string): Promise<boolean>;
  /** Chunks the documents (domain/corpus.ts chunkText) and inserts everything in one transaction. */
  addDocuments(tenantId: string, corpusId: string, documents: readonly NewDocument[]): Promise<AddDocumentsResult>;
  /**
   * The `k` chunks that match `query` best by BM25, best first. The query is plain words: any
   * search syntax in it is taken literally; no word in it → [].
   */
  search(tenantId: string, corpusId: string, query: string, k: number): Promise<ChunkHit[]>;
}

export type EventListener = (event: WorkflowEvent) => void;

/** Fan-out of committed events to live subscribers (SSE). */
export interface EventBus {
  publish(events: readonly WorkflowEvent[]): void;
  /**
   * The workflow's events as they commit. `after`: the seq its subscriber has read up to (or will
   * read from the journal); scaled out, the bus delivers everything after it in order.
   */
  subscribe(workflowId: string, listener: EventListener, after?: number): () => void;
  /** Every committed event of every workflow (telemetry); returns the unsubscribe function. */
  subscribeAll(listener: EventListener): () => void;
}

/**
 * One of the running places (MAX_RUNNING_WORKFLOWS, MAX_RUNNING_WORKFLOWS_PER_TENANT) held by a
 * workflow's execution, root or child. A workflow that only waits on its children gives it back and
 * takes one again, ahead of roots waiting to start, when it has work again (docs/workflows.md#running-caps).
 */
export interface RunningPlace {
  readonly held: boolean;
  /** Gives the place back; nothing when it is not held. */
  release(): void;
  /** Takes a place again, ahead of roots; rejects with the signal's reason when it aborts first. */
  retake(signal: AbortSignal): Promise<void>;
}

/**
 * What only the instance running a workflow tree can act on, told by the work queue. Scaled out
 * (docs/operations.md#scale-out) both come from the database: another instance took the run's
 * lease over, or a cancel arrived through another instance. In one process neither happens.
 */
export interface RunSignals {
  /** This instance lost the root's lease: its runs stop at once and write nothing more. */
  lost(rootWorkflowId: string): void;
  /** These workflows were cancelled through another instance. */
  cancelled(workflowIds: readonly string[]): void;
}

/** How long an idempotency key is remembered (docs/design.md#execution); older ones are pruned. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** Where submitted workflows wait for the executor (docs/design.md#scale-out: a job queue when scaled out). */
export interface WorkQueue {
  /** Tenants take turns: one tenant's backlog never queues another's work behind it. */
  enqueue(workflowId: string, tenantId: string): void;
  /**
   * Starts delivering work; `handler` runs once per enqueued id, holding a place it may give back.
   * `untouched`: no execution can have run the workflow nor a cancel have reached it since it was
   * submitted (in one process: always; scaled out: the root's first lease, idle, not cancelled),
   * so the submitting instance may run it from the records it created.
   */
  start(
    handler: (workflowId: string, place: RunningPlace, untouched: boolean) => Promise<void>,
    signals?: RunSignals,
  ): void;
  /**
   * Runs `work` for a root that runs nowhere now (a cancel settled at once), as the one instance
   * allowed to write it; false, without running it, when another instance runs it.
   */
  runHere(workflowId: string, work: () => Promise<void>): Promise<boolean>;
  /** The root's run stopped to wait until `at` (epoch ms, RUN_PARKED): it is run again then. */
  resumeAt(workflowId: string, tenantId: string, at: number): void;
  /** Tells the instance running these workflows that they were cancelled (in one process: this one, already told). */
  announceCancel(workflowIds: readonly string[]): void;
  /** A place for a child workflow of the tenant, ahead of roots; rejects when the signal aborts first. */
  place(tenantId: string, signal: AbortSignal): Promise<RunningPlace>;
  /** Places held now, by the tenant's workflows or (no tenant) by all. */
  placesHeld(tenantId?: string): number;
  /** Stops delivering new work; resolves when no handler is running any more. */
  stop(): Promise<void>;
  readonly depth: number;
}

/** What this instance's leases did since it started (GET /healthz, GET /metrics). */
export interface LeaseStats {
  /** Leases held now. */
  held: number;
  claims: number;
  /** Leases this instance lost: not renewed in time, or refused by the fence. */
  losses: number;
  /** Expired leases (of any instance) this instance cleared. */
  reaps: number;
  /** Commits the fence refused. */
  fenceRejections: number;
}

/** Uniform in [0, 1): the random source of Thompson sampling (injectable for deterministic tests). */
export type RandomSource = () => number;

/**
 * The agent registry (docs/design.md#workflow-definitions, docs/design.md#http-api-conventions; limits in
 * domain/agents.ts), tenant-scoped: another
 * tenant's agent is absent. A taken name is AppError CONFLICT, a limit LIMIT_EXCEEDED.
 */
export interface AgentRegistry {
  /** Version 1, or the next version of a retired name. */
  create(tenantId: string, name: string, config: AgentConfig): Promise<RegisteredAgent>;
  /** Current versions of the live names, by name. */
  list(tenantId: string, page: PageRequest & { role?: AgentRole }): Promise<Page<RegisteredAgent>>;
  /** The current version, or `version` (retired names answer undefined). */
  get(tenantId: string, name: string, version?: number): Promise<RegisteredAgent | undefined>;
  /** Every version of a live name, oldest first ([] when none). */
  versions(tenantId: string, name: string): Promise<RegisteredAgent[]>;
  /** Adds version n + 1; undefined when the name is not live. */
  update(tenantId: string, name: string, config: AgentConfig): Promise<RegisteredAgent | undefined>;
  /** Retires the name; false when it is not live. */
  retire(tenantId: string, name: string): Promise<boolean>;
  /** Current versions of the live names of `role`. */
  ofRole(tenantId: string, role: AgentRole): Promise<RegisteredAgent[]>;
  /** Per agent name, its rewarded runs of the task type and complexity (each workflow once): reward, successes, cost. */
  rewardHistory(
    tenantId: string,
    agents: readonly string[],
    taskType: string,
    complexity: Complexity,
  ): Promise<Map<string, AgentRunSums>>;
  /** Per strategy, the ended runs that selected with it in the window. */
  strategySums(tenantId: string, filter: SelectionFilter): Promise<StrategySums[]>;
  /** Per task type and strategy, the counterfactual savings of the selecting uses of the window's ended runs. */
  savingsSums(tenantId: string, filter: SelectionFilter): Promise<SavingsSums[]>;
  /**
   * Per strategy, the ended runs among its newest `perStrategy` selecting uses of the task type
   * (`strategy: "auto"` reads this on every selection: bounded by `perStrategy`, not by history).
   */
  recentStrategySums(tenantId: string, taskType: string, perStrategy: number): Promise<StrategySums[]>;
}
