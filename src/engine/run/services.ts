import type { ResponseCache } from '../../domain/cache.js';
import type {
  Clock,
  CorpusStore,
  EngagementStore,
  EventBus,
  MetricsStore,
  ModelCatalog,
  WorkflowStore,
} from '../../domain/ports.js';
import type { WorkflowRecord } from '../../domain/records.js';
import type { ToolRegistry } from '../../tools/registry.js';
import type { Semaphore } from './semaphore.js';
import type { SpawnLedger } from './spawn-ledger.js';
import type { TenantSpend } from './tenant-spend.js';
import type { RetryPolicy } from './transport-retry.js';

/** What runs read of the tenants' corpora: a prompt's `retrieval` searches one. */
export type CorpusReader = Pick<CorpusStore, 'get' | 'search'>;

/** What a run needs from the executor that owns it. */
export interface EngineServices {
  store: WorkflowStore;
  /** Read at a workflow's end: its children's efficiency records roll up into its own. */
  metrics: Pick<MetricsStore, 'efficiency'>;
  cache: ResponseCache;
  bus: EventBus;
  models: ModelCatalog;
  clock: Clock;
  tools: ToolRegistry;
  /** Prompts with `retrieval` search these, and read engagement for `guard: {auto: true}`. */
  corpora: CorpusReader;
  engagement: EngagementStore;
  llmSlots: Semaphore;
  retry: RetryPolicy;
  /** Bytes one prompt node's answer may have (MAX_NODE_OUTPUT_BYTES). */
  maxNodeOutputBytes: number;
  /** MAX_LLM_CALLS_PER_WORKFLOW: no workflow's request budget is above it. */
  maxLlmCallsPerWorkflow: number;
  /** TENANT_DAILY_BUDGET_USD: each real-money call reserves its worst case here before it is sent. */
  spend: TenantSpend;
  /** Bytes one node's conversation may reach (MAX_CONVERSATION_BYTES). */
  maxConversationBytes: number;
  /** True once shutdown began: no new node or model call starts. */
  isStopping(): boolean;
  /** Spawn rate and ordering per workflow tree, shared by every run of this process. */
  spawns: SpawnLedger;
  /** Runs a child workflow to a terminal state under the parent's signal. */
  runChild(child: WorkflowRecord, parentSignal: AbortSignal, parentSpan: string): Promise<WorkflowRecord>;
  /** Reports an unexpected error (a bug or an I/O failure), which the run turns into INTERNAL. */
  onError(err: unknown, context: Record<string, unknown>): void;
}
