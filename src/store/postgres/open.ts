import { type Config, runningPerTenant } from '../../config.js';
import { IDEMPOTENCY_TTL_MS } from '../../domain/ports.js';
import { retentionMs, type ScaleOut, type StoreSet, type StoreSetOptions } from '../store-set.js';
import { createPostgresAgentRegistry } from './agents.js';
import { createPostgresApiKeyStore } from './api-keys.js';
import { type BackgroundJobs, startBackgroundJobs } from './background-jobs.js';
import { createPostgresCacheStore } from './cache.js';
import { createPostgresCorpusStore } from './corpora.js';
import { createPostgresEngagementStore } from './engagement.js';
import { createPostgresCommitter } from './group-commit.js';
import { createLeasedWorkQueue, type LeasedWorkQueue } from './leased-queue.js';
import { createLeaseBook, WORK_CHANNEL } from './leases.js';
import { createPostgresMetricsStore } from './metrics.js';
import { migratePostgres } from './migrate.js';
import { openPostgresPool } from './pool.js';
import { createPostgresRetentionSweeper } from './retention.js';
import { createLeaseFence, HeldLeases } from './run-leases.js';
import { createSharedEventBus, type SharedEventBus } from './shared-event-bus.js';
import { createPostgresTraceStore } from './traces.js';
import { createPostgresUsageAnalyticsStore } from './usage-analytics.js';
import { createWakeups } from './wakeups.js';
import { createPostgresWorkflowStore } from './workflows.js';

type PostgresConfig = Pick<
  Config,
  | 'DATABASE_POOL_SIZE'
  | 'LEASE_MS'
  | 'LEASE_HEARTBEAT_MS'
  | 'MAX_RUNNING_WORKFLOWS'
  | 'MAX_RUNNING_WORKFLOWS_PER_TENANT'
  | 'API_KEYS'
> & { DATABASE_URL: string };

/**
 * The PostgreSQL database at DATABASE_URL and every store over it, migrated at boot (under the
 * migration lock, so instances booting together migrate once), with what several instances over
 * it share (docs/operations.md#scale-out): run leases fencing every group commit, the work queue
 * over them, and the event fan-out.
 */
export async function openPostgresStores(
  options: StoreSetOptions & { config: PostgresConfig; instanceId: string },
): Promise<StoreSet> {
  const { config, clock, warn, instanceId } = options;
  const pool = openPostgresPool({ connectionString: config.DATABASE_URL, max: config.DATABASE_POOL_SIZE });
  // An idle connection the server drops (a restart, a failover) must not crash the process: the pool
  // replaces it, and the next query reports what went wrong to its caller.
  pool.on('error', (err) => warn('an idle PostgreSQL connection failed; the pool replaces it', err));
  // A connection that fails while checked out must not crash the process either: its query fails.
  pool.on('connect', (client) => {
    client.on('error', (err) => warn('a PostgreSQL connection failed; its query fails and the pool replaces it', err));
  });
  try {
    await migratePostgres(pool);
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }
  const held = new HeldLeases();
  const book = createLeaseBook(pool, {
    owner: instanceId,
    leaseMs: config.LEASE_MS,
    maxPerTenant: runningPerTenant(config),
  });
  // Bound late: the queue is built by deps.ts around its local one, after the stores.
  let queue: LeasedWorkQueue | undefined;
  let bus: SharedEventBus | undefined;
  const fence = createLeaseFence(instanceId, held, (root) => queue?.lost(root));
  const committer = createPostgresCommitter(pool, { fence, announceEvents: { from: instanceId } });
  const wakeups = createWakeups(pool, {
    connectionString: config.DATABASE_URL,
    onReconnect: () => bus?.resync(),
  });
  const onError = (err: unknown) => warn('run coordination over PostgreSQL failed; it tries again', err);
  const corpora = createPostgresCorpusStore(pool, {
    now: () => clock.now(),
    onError: (err) => warn('corpus purge failed; it resumes with the next delete or start', err),
    searchConcurrencyPerTenant: config.SEARCH_CONCURRENCY_PER_TENANT,
  });
  const retention = createPostgresRetentionSweeper(committer, {
    clock,
    retentionMs: retentionMs(config),
    // Once per cluster: the background jobs' cron sweeps, whichever instance takes the tick.
    timer: false,
    onError: (err) => warn('retention sweep failed; it runs again at the next tick', err),
  });
  const store = createPostgresWorkflowStore(pool, committer);
  let jobs: BackgroundJobs;
  try {
    jobs = await startBackgroundJobs({
      pool,
      maintenance: {
        pruneIdempotencyKeys: () => store.pruneIdempotencyKeys(clock.now() - IDEMPOTENCY_TTL_MS),
        sweepRetention: () => retention.sweepNow(),
        purgeCorpora: async () => corpora.purgeNow(),
      },
      async wake(workflowId) {
        await pool.query('UPDATE workflows SET parked = 0 WHERE id = $1 AND parked = 1', [workflowId]);
        await wakeups.notify(WORK_CHANNEL, 'background-jobs');
      },
      warn,
    });
  } catch (err) {
    retention.stop();
    await corpora.stop();
    await wakeups.close();
    await pool.end().catch(() => {});
    throw err;
  }
  const scaleOut: ScaleOut = {
    workQueue(local, { concurrency }) {
      queue = createLeasedWorkQueue({
        local,
        book,
        held,
        wakeups,
        owner: instanceId,
        concurrency,
        leaseMs: config.LEASE_MS,
        heartbeatMs: config.LEASE_HEARTBEAT_MS,
        onError,
      });
      return queue;
    },
    eventBus(local) {
      bus = createSharedEventBus({
        self: instanceId,
        local,
        wakeups,
        events: (id, after, limit) => store.events(id, after, limit),
        onError,
      });
      return bus;
    },
    leases: () => queue?.stats() ?? { held: held.size, claims: 0, losses: 0, reaps: 0, fenceRejections: 0 },
  };
  let stopping: Promise<void> | undefined;
  return {
    kind: 'postgres',
    scaleOut,
    store,
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
      stopping = Promise.all([corpora.stop(), jobs.stop()]).then(() => {});
    },
    async close() {
      await stopping;
      await jobs.stop();
      await committer.drain();
      await wakeups.close();
      await pool.end();
    },
  };
}
