import type { Config } from '../config.js';
import type { CacheStore } from '../domain/cache.js';
import type {
  AgentRegistry,
  ApiKeyStore,
  Clock,
  CorpusStore,
  EngagementStore,
  EventBus,
  LeaseStats,
  MetricsStore,
  TraceStore,
  UsageAnalyticsStore,
  WorkflowStore,
  WorkQueue,
} from '../domain/ports.js';
import type { RetentionSweeper } from './retention.js';

/**
 * Every storage port of one database, as deps.ts takes them from either adapter
 * (src/store/sqlite/open.ts, src/store/postgres/open.ts): `DATABASE_URL` picks PostgreSQL, else
 * the SQLite file at `DATABASE_PATH`.
 */
export interface StoreSet {
  kind: 'sqlite' | 'postgres';
  store: WorkflowStore;
  traces: TraceStore;
  apiKeys: ApiKeyStore;
  /** The response cache's durable tier; undefined when CACHE_PERSIST is off. */
  cache: CacheStore | undefined;
  metrics: MetricsStore;
  corpora: CorpusStore;
  engagement: EngagementStore;
  agents: AgentRegistry;
  usage: UsageAnalyticsStore;
  retention: RetentionSweeper;
  /** Several instances over one database (PostgreSQL); undefined for SQLite (one process). */
  scaleOut?: ScaleOut;
  /** SQLite's write-ahead log length in frames (GET /metrics); 0 on PostgreSQL. */
  walFrames(): number;
  /** Stops background work (corpus purges, retention) before the engine's last commits. */
  stop(): void;
  /** Commits what is queued and closes the database; after `stop` and the engine's shutdown. */
  close(): Promise<void>;
}

/**
 * Run ownership across instances (docs/operations.md#scale-out): the database is the queue and
 * the fan-out. deps.ts wraps the in-process queue and bus with these.
 */
export interface ScaleOut {
  /** Roots claimed through leases, run in the running places of `local`. */
  workQueue(local: WorkQueue, options: { concurrency: number }): WorkQueue;
  /** Events of every instance's commits, fed to this instance's streams; `local` for telemetry. */
  eventBus(local: EventBus): EventBus;
  leases(): LeaseStats;
}

/** What both adapters need to open their stores. */
export interface StoreSetOptions {
  config: Pick<Config, 'CACHE_PERSIST' | 'RETENTION_DAYS' | 'SEARCH_WORKERS' | 'SEARCH_CONCURRENCY_PER_TENANT'>;
  clock: Clock;
  /** Background failures (a corpus purge, a retention sweep, a WAL checkpoint), logged by the caller. */
  warn: (message: string, err?: unknown) => void;
}

export const retentionMs = (config: Pick<Config, 'RETENTION_DAYS'>): number =>
  config.RETENTION_DAYS * 24 * 60 * 60 * 1000;
