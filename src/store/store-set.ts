import type { Config } from '../config.js';
import type { CacheStore } from '../domain/cache.js';
import type {
  AgentRegistry,
  ApiKeyStore,
  Clock,
  CorpusStore,
  EngagementStore,
  MetricsStore,
  TraceStore,
  UsageAnalyticsStore,
  WorkflowStore,
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
  /** SQLite's write-ahead log length in frames (GET /metrics); 0 on PostgreSQL. */
  walFrames(): number;
  /** Stops background work (corpus purges, retention) before the engine's last commits. */
  stop(): void;
  /** Commits what is queued and closes the database; after `stop` and the engine's shutdown. */
  close(): Promise<void>;
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
