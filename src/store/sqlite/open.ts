import type { Config } from '../../config.js';
import { retentionMs, type StoreSet, type StoreSetOptions } from '../store-set.js';
import { createSqliteAgentRegistry } from './agents.repo.js';
import { createSqliteApiKeyStore } from './api-keys.repo.js';
import { createSqliteCacheStore } from './cache.repo.js';
import { startCheckpointer } from './checkpointer.js';
import { createSqliteCorpusStore } from './corpora.repo.js';
import { openDatabase } from './db.js';
import { createSqliteEngagementStore } from './engagement.repo.js';
import { createGroupCommitter } from './group-commit.js';
import { createSqliteMetricsStore } from './metrics.repo.js';
import { createRetentionSweeper } from './retention.repo.js';
import { createSqliteTraceStore } from './spans.repo.js';
import { createSqliteUsageAnalyticsStore } from './usage-analytics.repo.js';
import { createSqliteWorkflowStore } from './workflows.repo.js';

/** The SQLite file at DATABASE_PATH and every store over it, sharing one group committer. */
export function openSqliteStores(
  options: StoreSetOptions & { config: Pick<Config, 'DATABASE_PATH' | 'DB_SYNCHRONOUS'> },
): StoreSet {
  const { config, clock, warn } = options;
  const db = openDatabase(config.DATABASE_PATH, { synchronous: config.DB_SYNCHRONOUS });
  const committer = createGroupCommitter(db);
  const checkpointer =
    config.DATABASE_PATH === ':memory:'
      ? undefined
      : startCheckpointer(db, {
          path: config.DATABASE_PATH,
          intervalMs: 200,
          committer,
          onError: (message) => warn(`WAL checkpoint failed: ${message}`),
        });
  const corpora = createSqliteCorpusStore(db, committer, {
    now: () => clock.now(),
    onError: (err) => warn('corpus purge failed; it resumes with the next delete or start', err),
    databasePath: config.DATABASE_PATH,
    searchWorkers: config.SEARCH_WORKERS,
    searchConcurrencyPerTenant: config.SEARCH_CONCURRENCY_PER_TENANT,
  });
  const retention = createRetentionSweeper(db, committer, {
    clock,
    retentionMs: retentionMs(config),
    onError: (err) => warn('retention sweep failed; it runs again at the next tick', err),
  });
  return {
    kind: 'sqlite',
    store: createSqliteWorkflowStore(db, committer),
    traces: createSqliteTraceStore(db, committer),
    apiKeys: createSqliteApiKeyStore(db, committer),
    cache: config.CACHE_PERSIST ? createSqliteCacheStore(db, committer) : undefined,
    metrics: createSqliteMetricsStore(db, committer),
    corpora,
    engagement: createSqliteEngagementStore(db),
    agents: createSqliteAgentRegistry(db, committer, () => clock.now()),
    usage: createSqliteUsageAnalyticsStore(db),
    retention,
    walFrames: () => checkpointer?.walFrames() ?? 0,
    stop() {
      corpora.stop();
      retention.stop();
    },
    async close() {
      await corpora.close();
      committer.flushNow();
      await checkpointer?.stop();
      db.close();
    },
  };
}
