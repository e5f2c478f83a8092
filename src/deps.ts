import type { Logger } from 'pino';
import { createResponseCache } from './cache/response-cache.js';
import { type Config, runningPerTenant } from './config.js';
import { hashApiKey } from './domain/api-key.js';
import type { ResponseCache } from './domain/cache.js';
import { newId } from './domain/ids.js';
import type {
  AgentRegistry,
  ApiKeyStore,
  Clock,
  CorpusStore,
  EngagementStore,
  EventBus,
  LeaseStats,
  LlmProvider,
  MetricsStore,
  ModelCatalog,
  RandomSource,
  TraceStore,
  UsageAnalyticsStore,
  WorkflowStore,
  WorkQueue,
} from './domain/ports.js';
import { createExecutor, type Executor } from './engine/executor.js';
import { createToolExplorer, type ToolExplorer } from './engine/tool-explorer.js';
import { systemClock } from './inproc/clock.js';
import { createInProcessEventBus } from './inproc/event-bus.js';
import { createInProcessWorkQueue } from './inproc/work-queue.js';
import { createAnthropicProvider } from './llm/anthropic.js';
import { createModelCatalog } from './llm/models.js';
import { createOpenAiProvider } from './llm/openai.js';
import { createSimulatedProvider } from './llm/simulated.js';
import { createLogger } from './logging/logger.js';
import { logFailedWorkflows } from './logging/workflow-log.js';
import { openPostgresStores } from './store/postgres/open.js';
import type { RetentionSweeper } from './store/retention.js';
import { openSqliteStores } from './store/sqlite/open.js';
import type { StoreSet } from './store/store-set.js';
import { createPrometheusMetrics, type PrometheusMetrics } from './telemetry/prometheus.js';
import { createToolRegistry, type ToolRegistry } from './tools/registry.js';

/** The one object that holds every collaborator; built by createDeps (below), passed to buildApp. */
export interface Deps {
  config: Config;
  logger: Logger;
  clock: Clock;
  store: WorkflowStore;
  apiKeys: ApiKeyStore;
  events: EventBus;
  queue: WorkQueue;
  models: ModelCatalog;
  cache: ResponseCache;
  /** Efficiency records, rewards and feedback (docs/design.md#events-spans-metrics-and-rewards). */
  metrics: MetricsStore;
  /** Traces and spans (docs/design.md#events-spans-metrics-and-rewards). */
  traces: TraceStore;
  /** Retrieval corpora and their BM25 search (docs/design.md#agent-tools). */
  corpora: CorpusStore;
  /**
   * The agent registry and the agent-use history selection scores by (docs/design.md#workflow-definitions,
   * docs/design.md#complexity-allocation-selection-and-review).
   */
  agents: AgentRegistry;
  executor: Executor;
  /** The built-in agent tools (docs/design.md#agent-tools). */
  tools: ToolRegistry;
  /** Retrieval engagement per model (docs/design.md#agent-tools): analytics, the auto guard, the audit's Tier 2. */
  engagement: EngagementStore;
  /** The dashboard, tool and model analytics (docs/design.md#events-spans-metrics-and-rewards). */
  usage: UsageAnalyticsStore;
  /** Runs a read-only tool as a node of a workflow, for exploration (docs/design.md#http-api-conventions). */
  toolExplorer: ToolExplorer;
  /** Deletes finished workflow trees past RETENTION_DAYS, in small batches on a timer (docs/operations.md#retention). */
  retention: RetentionSweeper;
  /** Prometheus metrics for GET /metrics (not the efficiency metrics). */
  telemetry: PrometheusMetrics;
  /**
   * This process: an id unique to its start (`in_…`), the database kind its stores use and, over
   * PostgreSQL, what its run leases did.
   */
  instance: { id: string; database: StoreSet['kind']; leases?: () => LeaseStats };
  /** Flipped by main.ts on SIGTERM/SIGINT: the API answers 503 from then on. */
  lifecycle: {
    shuttingDown: boolean;
    /** Set by main.ts just before the listener closes: requests wait for it before any answer. */
    held?: Promise<void> | undefined;
  };
  /** Closes the database and every other resource; idempotent. */
  close(): Promise<void>;
}

export interface DepsOverrides {
  logger?: Logger;
  clock?: Clock;
  /** Thompson sampling's random source (default Math.random); tests pass a seeded one. */
  random?: RandomSource;
  /** Extra or replacement providers by prefix (tests point `anthropic` at a fake server this way too). */
  providers?: Record<string, LlmProvider>;
  /** The stores to run over, opened by the caller (default: DATABASE_URL's PostgreSQL, else DATABASE_PATH's SQLite). */
  stores?: StoreSet;
}

/** Builds every collaborator from the config. The only place (with main.ts) that names concrete classes. */
export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const logger = overrides.logger ?? createLogger({ level: config.LOG_LEVEL });
  const clock = overrides.clock ?? systemClock;
  const storeLog = logger.child({ module: 'store' });
  const storeOptions = {
    clock,
    warn: (message: string, err?: unknown) => storeLog.warn(err === undefined ? {} : { err }, message),
  };
  const instanceId = newId('in');
  // DATABASE_URL picks PostgreSQL; without it the SQLite file at DATABASE_PATH, as always.
  const stores =
    overrides.stores ??
    (config.DATABASE_URL
      ? await openPostgresStores({
          ...storeOptions,
          instanceId,
          config: { ...config, DATABASE_URL: config.DATABASE_URL },
        })
      : openSqliteStores({ ...storeOptions, config }));
  const { store, apiKeys, traces, metrics, corpora, engagement, agents, usage, retention } = stores;
  await apiKeys.sync(config.API_KEYS.map(({ tenantId, key }) => ({ tenantId, keyHash: hashApiKey(key) })));

  const engineLog = logger.child({ module: 'engine' });
  const onError = (err: unknown, context: Record<string, unknown>) =>
    engineLog.error({ err, ...context }, 'unexpected error');
  const localEvents = createInProcessEventBus();
  const localQueue = createInProcessWorkQueue({
    concurrency: config.MAX_RUNNING_WORKFLOWS,
    perTenant: runningPerTenant(config),
    onError: (err, workflowId) => onError(err, { workflowId }),
  });
  // Over PostgreSQL the database is the queue (run leases) and the events' fan-out between instances.
  const { scaleOut } = stores;
  const events = scaleOut ? scaleOut.eventBus(localEvents) : localEvents;
  const queue = scaleOut ? scaleOut.workQueue(localQueue, { concurrency: config.MAX_RUNNING_WORKFLOWS }) : localQueue;

  const providers: Record<string, LlmProvider> = { sim: createSimulatedProvider({ clock }) };
  if (config.ANTHROPIC_API_KEY) {
    providers.anthropic = createAnthropicProvider({
      apiKey: config.ANTHROPIC_API_KEY,
      maxResponseBytes: config.MAX_PROVIDER_RESPONSE_BYTES,
      ...(config.ANTHROPIC_BASE_URL ? { baseURL: config.ANTHROPIC_BASE_URL } : {}),
    });
  }
  if (config.OPENAI_BASE_URL) {
    providers.openai = createOpenAiProvider({
      baseURL: config.OPENAI_BASE_URL,
      maxResponseBytes: config.MAX_PROVIDER_RESPONSE_BYTES,
      ...(config.OPENAI_API_KEY ? { apiKey: config.OPENAI_API_KEY } : {}),
    });
  }
  Object.assign(providers, overrides.providers);
  const models = createModelCatalog({
    providers,
    defaultModel: config.DEFAULT_MODEL,
    hasAnthropicKey: config.ANTHROPIC_API_KEY !== undefined,
    ...(config.MODEL_TIERS ? { tiers: config.MODEL_TIERS } : {}),
    ...(config.MODEL_PRICES ? { prices: config.MODEL_PRICES } : {}),
  });

  const cacheLog = logger.child({ module: 'cache' });
  const cache = createResponseCache({
    store: stores.cache,
    clock,
    maxItems: config.CACHE_MAX_ITEMS,
    maxBytes: config.CACHE_MAX_BYTES,
    ttlMs: config.CACHE_TTL_MS,
    onError: (err) => cacheLog.warn({ err }, 'cache background write failed'),
  });

  const tools = createToolRegistry({ maxResultBytes: config.MAX_TOOL_RESULT_BYTES });
  const executor = createExecutor({
    agents,
    usage,
    random: overrides.random ?? Math.random,
    // A tenant's entry over `*`, field by field.
    costAwareDefaults: (tenantId) => ({
      ...config.COST_AWARE_DEFAULTS?.['*'],
      ...config.COST_AWARE_DEFAULTS?.[tenantId],
    }),
    cache,
    traces,
    store,
    metrics,
    bus: events,
    queue,
    models,
    clock,
    tools,
    corpora,
    engagement,
    concurrency: config.CONCURRENCY,
    retry: {
      maxAttempts: config.RETRY_MAX_ATTEMPTS,
      baseDelayMs: config.RETRY_BASE_DELAY_MS,
      maxDelayMs: 30_000,
      // Scaled out, a wait longer than a lease gives the run up until its time (RUN_PARKED).
      ...(scaleOut ? { parkAfterMs: config.LEASE_MS } : {}),
    },
    maxNodeOutputBytes: config.MAX_NODE_OUTPUT_BYTES,
    maxLlmCallsPerWorkflow: config.MAX_LLM_CALLS_PER_WORKFLOW,
    tenantDailyBudgetUsd: config.TENANT_DAILY_BUDGET_USD,
    maxConversationBytes: config.MAX_CONVERSATION_BYTES,
    onError,
    // Scaled out, a cluster cron prunes (store/postgres/background-jobs.ts) and the leased queue claims.
    soleInstance: scaleOut === undefined,
  });

  const stopFailureLog = logFailedWorkflows(events, logger);
  const telemetry = createPrometheusMetrics({
    bus: events,
    queueDepth: () => queue.depth,
    running: () => executor.running,
    walFrames: () => stores.walFrames(),
    ...(scaleOut ? { leases: scaleOut.leases } : {}),
    modelClass: (id) => models.classOf(id),
  });

  let closed: Promise<void> | undefined;
  return {
    config,
    logger,
    clock,
    store,
    apiKeys,
    events,
    queue,
    models,
    cache,
    metrics,
    traces,
    corpora,
    agents,
    executor,
    tools,
    engagement,
    usage,
    toolExplorer: createToolExplorer({ store, cache, tools }),
    retention,
    telemetry,
    instance: { id: instanceId, database: stores.kind, ...(scaleOut ? { leases: scaleOut.leases } : {}) },
    lifecycle: { shuttingDown: false },
    close() {
      closed ??= (async () => {
        telemetry.close();
        stopFailureLog();
        await executor.shutdown(0);
        stores.stop();
        await stores.close();
      })();
      return closed;
    },
  };
}
