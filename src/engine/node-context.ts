import type { Allocation } from '../domain/allocation.js';
import type {
  AgentConfig,
  ChildDefinition,
  PromptNode,
  WorkflowDefinition,
  WorkflowNode,
} from '../domain/definition.js';
import type { AppError, ErrorInfo } from '../domain/errors.js';
import type { EventBody, TURN_KINDS } from '../domain/events.js';
import type {
  LlmMessage,
  LlmRequest,
  LlmResponse,
  ToolDefinition,
  ToolResultBlock,
  ToolUseBlock,
} from '../domain/llm.js';
import type { ChildLauncher, Clock, NewWorkflow, ResolvedModel, SpawnSlot } from '../domain/ports.js';
import type { NodePatch, NodeRecord, WorkflowRecord } from '../domain/records.js';
import type { ReflectionLevel, ReflectionResolution } from '../domain/reflection.js';
import type { SpanFieldsByType, SpanStatus, SpanType } from '../domain/spans.js';
import type { Complexity } from '../domain/task.js';
import type { TemplateScope } from '../domain/templates.js';
import type { EngagementFilter, EngagementSums, RetrievalRunRecord } from '../domain/tool-analytics.js';
import type { RetrievedChunk } from '../tools/tool.js';
import type { Deadline } from './run/deadline.js';

/**
 * What a node handler sees of the run it belongs to (docs/design.md#architecture-and-floors): four narrow facets
 * instead of the
 * run itself — a read-only view, a journal of changes, a model gateway, a child launcher — plus the
 * tools, the reflection state and a way to run its own child nodes. Types only: handlers depend on
 * this file, the Run implements it, and nothing imports back up.
 */

/** The workflow's `options.limits` with their defaults, and the service's bound on one node's output. */
export interface Limits {
  maxDepth: number;
  maxChildren: number;
  maxDescendants: number;
  maxLlmCalls: number;
  /** MAX_NODE_OUTPUT_BYTES. */
  maxNodeOutputBytes: number;
  /** MAX_CONVERSATION_BYTES: what one node's conversation with its model may reach. */
  maxConversationBytes: number;
}

/** The run as it stands, read-only. */
export interface RunView {
  readonly workflow: Readonly<WorkflowRecord>;
  readonly definition: WorkflowDefinition;
  readonly limits: Limits;
  readonly templateScope: TemplateScope;
  /** The task's complexity (declared, from its signals, or from the tree): what `model: "auto"` reads. */
  readonly complexity: Complexity;
  /** The allocation of a routed workflow (its task described); null for a bare tree (submission/routing.ts). */
  readonly allocation: Allocation | null;
  /** The workflow's node records by id (live: statuses and outputs as they are now). */
  readonly nodes: ReadonlyMap<string, Readonly<NodeRecord>>;
  /** Own properties only: `constructor` is not an agent. */
  agent(name: string): AgentConfig | undefined;
  /**
   * docs/design.md#caching toggles: the workflow's `options.cache`, the agent's `enableCache`, the prompt's
   * `disableCache`.
   */
  cacheEnabled(node: PromptNode, agent: AgentConfig): boolean;
}

export interface SpanStart<T extends SpanType> {
  type: T;
  parentId: string | null;
  nodeId: string | null;
  fields: SpanFieldsByType[T];
  startedAt?: number;
}

export interface SpanEnd<T extends SpanType> {
  fields?: Partial<SpanFieldsByType[T]>;
  /** A result that is a failure without an exception (a tool's error result). Default `ok`. */
  status?: 'ok' | 'error';
}

/** Every change a handler makes: in memory at once, durable with the next commit. */
export interface Journal {
  emit(nodeId: string | null, event: EventBody): void;
  patchNode(record: NodeRecord, patch: Omit<NodePatch, 'id'>): void;
  addWorkflow(created: NewWorkflow): void;
  /** A prompt run with `retrieval` ended: how its model engaged (docs/design.md#agent-tools). */
  addRetrievalRun(run: RetrievalRunRecord): void;
  /**
   * Runs `work` inside a span that ends `ok` with it, `error` when it throws, `interrupted` when the
   * service stops under it; `end` supplies what is known only at the end (tokens, a tool's failure).
   */
  withSpan<T extends SpanType, R>(
    span: SpanStart<T>,
    work: (spanId: string) => Promise<R>,
    end?: (result: R) => SpanEnd<T>,
  ): Promise<R>;
  /** A span whose work is already over (a handoff, a guardrail check, a cache hit). */
  recordSpan<T extends SpanType>(span: SpanStart<T>, status?: SpanStatus): string;
  /** Commits everything pending; resolves once it is durable (and published). */
  commit(): Promise<void>;
  /** Commits soon without waiting: progress that need not block the run. */
  commitSoon(): void;
}

/** One model call of a node. */
export interface ModelCall {
  node: string;
  nodeId: string;
  agent: string;
  attempt: number;
  turn: number;
  /** The rendered user message, recorded on the first turn only. */
  prompt?: string | undefined;
  /** What the call is for when it is not the prompt itself (e.g. `reflection`). */
  purpose?: string;
  /** Look up and collapse in the response cache (docs/design.md#caching toggles). */
  cacheable: boolean;
  /** The span the call's generation_span hangs under (the node's agent_span). */
  spanId: string;
}

export interface ModelAnswer {
  response: LlmResponse;
  costUsd: number;
  /** Set when the call was cacheable: the key it was looked up under. */
  cacheKey: string | undefined;
  fromCache: boolean;
}

/**
 * Everything between a prompt and a provider (docs/design.md#architecture-and-floors): the response cache, the
 * request budget
 * (`limits.maxLlmCalls`), the concurrency slots, the single transport-retry layer, generation spans.
 */
export interface ModelGateway {
  /** A model spec (`sim/sonnet`, a tier; DEFAULT_MODEL when absent) resolved to its provider. */
  resolve(spec: string | undefined): ResolvedModel;
  call(model: ResolvedModel, request: LlmRequest, signal: AbortSignal, info: ModelCall): Promise<ModelAnswer>;
  /** Stores a good answer under its key (the caller decides it is good); cache trouble never fails the run. */
  remember(model: ResolvedModel, answer: ModelAnswer): void;
}

/** The tools of a node's agent: a call outside `allowed` is refused back to the model, not run. */
/** Where a tool call comes from: the node, the agent's allowed tools, and what the call may use. */
export interface ToolCallSite {
  record: NodeRecord;
  allowed: ReadonlySet<string>;
  parentSpan: string;
  agent: string;
  /** provider/model of the call that asked for the tool (tool analytics). */
  model: string;
  /** The prompt's corpus, when it has `retrieval`: what `retrieve` searches. */
  retrieve?: (query: string) => Promise<RetrievedChunk[]>;
  /** Which call of which turn this is: a spawn replayed after a crash is matched by it. */
  slot: SpawnSlot;
}

export interface ToolBox {
  /** The Anthropic-format definitions of the named tools, sorted by name (stable cache keys). */
  definitions(names: readonly string[]): ToolDefinition[];
  /**
   * Runs one tool call: a function_span, a toolInvocation event and a tool_calls row; a tool
   * outside `allowed`, invalid input or a refused action is a tool-result error, never a throw.
   */
  invoke(use: ToolUseBlock, site: ToolCallSite): Promise<ToolResultBlock & { output: unknown }>;
}

/** One completed turn of a node's conversation, as committed (a `turnEnd` event). */
export interface CommittedTurn {
  /** The model call the turn answered (1-based). */
  turn: number;
  kind: (typeof TURN_KINDS)[number];
  /** The messages the turn added: the assistant's, then the user turn that answers it. */
  messages: LlmMessage[];
  /** A re-ask's prompt-level reflection entry, settled by the next answer. */
  reflectionId?: string | undefined;
  /** Counters a loop resumes with (the retrieval loop's). */
  state?: Record<string, unknown> | undefined;
}

/**
 * The turns of tool loops (turn-log.ts): each completed turn committed before the next model call,
 * and read back by a node re-run after a crash, which starts at its first uncommitted turn.
 */
export interface TurnLog {
  /** The turns dead executions committed in this conversation of the node's attempt, in order; usually none. */
  resumed(record: NodeRecord, conversation: string): Promise<CommittedTurn[]>;
  /** Commits the turn with everything pending; resolves once it is durable. */
  commit(record: NodeRecord, attempt: number, conversation: string, turn: CommittedTurn): Promise<void>;
}

/** Inputs a workflow-level reflection may revise for the next attempt (docs/design.md#reflection-and-retries). */
export interface PromptInputs {
  /** The rendered `data`. */
  data: Record<string, unknown> | undefined;
  /** The rendered agent system prompt, before the reflection prefix and the responseFormat instruction. */
  system: string | undefined;
}

/**
 * A run's reflection state (docs/design.md#reflection-and-retries): which levels are on, revised inputs, entries to
 * settle.
 */
export interface Reflections {
  readonly workflowLevel: boolean;
  readonly maxAttempts: number;
  readonly retryDelayMs: number;
  promptLevel(node: PromptNode): boolean;
  /** The inputs the node's next attempt renders with: revised by a reflection, else its definition's. */
  inputs(node: PromptNode, record: NodeRecord): PromptInputs;
  /** Revised inputs only (re-applied from the history after a restart); undefined when none. */
  revisedInputs(node: PromptNode, record: NodeRecord): PromptInputs | undefined;
  revise(nodeId: string, inputs: PromptInputs): void;
  /** Persists an entry with the next commit and emits reflectionEnd; returns the entry id. */
  record(input: {
    node: NodeRecord;
    attempt: number;
    nodeAttempt?: number;
    level: ReflectionLevel;
    reason: string;
    error: ErrorInfo;
    resolution: ReflectionResolution;
    decisionSuccess: boolean;
  }): string;
  /** Records whether the attempt (or answer) that followed a reflection succeeded. */
  settle(entryId: string, success: boolean): void;
}

/** Signals that abort with their parent, or with `onTimeout()` once `ms` have passed on the run's clock. */
export interface Deadlines {
  within(parent: AbortSignal, ms: number | undefined, onTimeout: () => AppError): Deadline;
}

/** The run's tenant's corpora and retrieval engagement (docs/design.md#agent-tools), for prompts with `retrieval`. */
export interface RunRetrieval {
  /** One of the tenant's corpora, by id or name; undefined when the tenant has no such corpus. */
  corpus(idOrName: string): Promise<{ id: string; name: string } | undefined>;
  /** BM25-ranked chunks of the corpus, best first, at most `k`. */
  search(corpusId: string, query: string, k: number): Promise<RetrievedChunk[]>;
  /** The tenant's engagement sums per model (what `guard: {auto: true}` decides by). */
  engagement(filter: EngagementFilter): Promise<EngagementSums[]>;
}

/** The workflow's agent slots (`max_agents`): a prompt's agent works inside one. */
export interface AgentSlots {
  run<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T>;
}

export interface NodeContext {
  readonly view: RunView;
  readonly journal: Journal;
  readonly models: ModelGateway;
  readonly children: ChildLauncher;
  readonly tools: ToolBox;
  readonly turns: TurnLog;
  readonly retrieval: RunRetrieval;
  readonly reflections: Reflections;
  readonly agents: AgentSlots;
  readonly clock: Clock;
  /** The run's deadlines, all on one timer (deadline.ts). */
  readonly deadlines: Deadlines;
  /** The run's running place: waits on child workflows and parallel branches go through it. */
  readonly place: PlaceKeeper;
  /** Runs a node of this workflow through its attempt loop: what containers do with their steps. */
  runNode(node: WorkflowNode, signal: AbortSignal, parentSpan: string): Promise<unknown>;
}

/** One attempt of one node. */
export interface NodeAttempt {
  record: NodeRecord;
  signal: AbortSignal;
  attempt: number;
  /** The span this node's spans hang under (its container's, or the run's root). */
  parentSpan: string;
}

/**
 * What a kind's submission check gets (submission/rules.ts builds it): where the node sits, and the
 * narrow rules of its scope. The kind's own fields are its handler's to check; the walk over the
 * steps, names, nesting and limits is the rules' own.
 */
export interface CheckContext {
  /** The node's path in the definition (`root.steps.0`). */
  readonly path: string;
  /** Names of the steps that complete before this node (templates may refer to them). */
  readonly before: ReadonlySet<string>;
  readonly depth: number;
  /** Records a violation at `path`. */
  issue(path: string, message: string): void;
  /** The agent of that name in this node's scope. */
  agent(name: string): AgentConfig | undefined;
  /** Checks the `{{…}}` references in every string of `value` against this node's scope. */
  templates(value: unknown, path: string): void;
  /** Checks a model spec (`auto` needs `agent`'s role); the provider it resolves to, if it does. */
  model(spec: string, path: string, agent?: AgentConfig): string | undefined;
  /** The provider a model spec (undefined: the default model) resolves to, recording nothing. */
  provider(spec: string | undefined): string | undefined;
  /** Checks an agent table of a child definition (models, tools, simulate scripts). */
  agents(agents: Readonly<Record<string, AgentConfig>>, path: string): void;
  /** Whether a step of this workflow completes before the node, comes later, or does not exist. */
  step(name: string): 'before' | 'later' | 'absent';
  /** A corpus a retrieval names, checked against the tenant's corpora after the rules pass. */
  corpus(idOrName: string, path: string): void;
  /** Checks a child workflow definition as a scope of its own (after the tree's child limits). */
  child(definition: ChildDefinition, path: string): void;
}

/** What a kind's redaction may use (submission/redaction.ts implements it). */
export interface Redactor {
  text(value: string): string;
  value<T>(value: T): T;
  child(definition: ChildDefinition): ChildDefinition;
}

/**
 * The run's running place (docs/workflows.md#running-caps, run-place.ts): given back while every strand of
 * the run only waits on child workflows, retaken before it works again.
 */
export interface PlaceKeeper {
  /** Runs a wait on child workflows (the run's other strands may still work meanwhile). */
  waitOnChildren<T>(wait: () => Promise<T>): Promise<T>;
  /** Runs concurrent branches, each a strand of its own; settles like Promise.allSettled. */
  branches<T>(tasks: ReadonlyArray<() => Promise<T>>): Promise<PromiseSettledResult<T>[]>;
}

/** How one node kind runs (docs/design.md#architecture-and-floors: one exhaustive table, src/engine/nodes/table.ts). */
export interface NodeHandler<N extends WorkflowNode> {
  /** Its result must be committed before the run moves on (a model's answer: never paid for twice). */
  readonly durable: boolean;
  run(ctx: NodeContext, node: N, at: NodeAttempt): Promise<unknown>;
  /** After a failed attempt: whether the node runs again (workflow-level reflection). Absent: never. */
  retry?(ctx: NodeContext, node: N, at: NodeAttempt, failure: unknown): Promise<boolean>;
  /** Before the attempt a person asked for (`at` is the failed one): a reflection with their note. Absent: not reflectable by hand. */
  reflectOnRequest?(ctx: NodeContext, node: N, at: NodeAttempt, note: string | null): Promise<void>;
  /** Submission checks of the kind's own fields (steps are walked by the caller). */
  check?(node: N, check: CheckContext): void;
  /** The node with its own free text and data redacted (steps are redacted by the caller). */
  redact?(node: N, redactor: Redactor): N;
}
