import type { Config } from '../../config.js';
import { retentionMs, type StoreSet, type StoreSetOptions } from '../store-set.js';
import { createPostgresAgentRegistry } from './agents.js';
import { createPostgresApiKeyStore } from './api-keys.js';
import { createPostgresCacheStore } from './cache.js';
import { createPostgresCorpusStore } from './corpora.js';
import { createPostgresEngagementStore } from './engagement.js';
import { createPostgresCommitter } from './group-commit.js';
import { takeInstanceLock } from './instance-lock.js';
import { createPostgresMetricsStore } from './metrics.js';
import { migratePostgres } from './migrate.js';
import { openPostgresPool } from './pool.js';
import { createPostgresRetentionSweeper } from './retention.js';
import { createPostgresTraceStore } from './traces.js';
import { createPostgresUsageAnalyticsStore } from './usage-analytics.js';
import { createPostgresWorkflowStore } from './workflows.js';

/**
 * The PostgreSQL database at DATABASE_URL and every store over it: migrated at boot (under the
 * migration lock, so instances booting together migrate once), then held by this instance alone
 * (instance-lock.ts) until it closes.
 */
export async function openPostgresStores(
  options: StoreSetOptions & { config: Pick<Config, 'DATABASE_POOL_SIZE'> & { DATABASE_URL: string } },
): Promise<StoreSet> {
  const { config, clock, warn } = options;
  const pool = openPostgresPool({ connectionString: config.DATABASE_URL, max: config.DATABASE_POOL_SIZE });
  // An idle connection the server drops (a restart, a failover) must not crash the process: the pool
  // replaces it, and the next query reports what went wrong to its caller.
  pool.on('error', (err) => warn('an idle PostgreSQL connection failed; the pool replaces it', err));
  let lock: Awaited<ReturnType<typeof takeInstanceLock>> | undefined;
  try {
    await migratePostgres(pool);
    lock = await takeInstanceLock(pool);
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }
  const committer = createPostgresCommitter(pool);
  const corpora = createPostgresCorpusStore(pool, {
    now: () => clock.now(),
    onError: (err) => warn('corpus purge failed; it resumes with the next delete or start', err),
    searchConcurrencyPerTenant: config.SEARCH_CONCURRENCY_PER_TENANT,
  });
  const retention = createPostgresRetentionSweeper(committer, {
    clock,
    retentionMs: retentionMs(config),
    onError: (err) => warn('retention sweep failed; it runs again at the next tick', err),
  });
  let stopping: Promise<void> | undefined;
  return {
    kind: 'postgres',
    store: createPostgresWorkflowStore(pool, committer),
    traces: createPostgresTraceStore(pool, committer),
    apiKeys: createPostgresApiKeyStore(pool),
    cache: config.CACHE_PERSIST ? createPostgresCacheStore(pool) : undefined,
    metrics: createPostgresMetricsStore(pool),
    corpora,
    engagement: createPostgresEngagementStore(pool),
    agents: createPostgresAgentRegistry(pool, () => clock.now()),
    usage: createPostgresUsageAnalyticsStore(pool),
    retention,
    walFrames: () => 0,
    stop() {
      retention.stop();
      stopping = corpora.stop();
    },
    async close() {
      await stopping;
      await committer.drain();
      await lock?.release();
      await pool.end();
    },
  };
}
