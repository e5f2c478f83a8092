import type pg from 'pg';
import { SELECTION_STRATEGIES } from '../../domain/agent-selection.js';
import { MAX_AGENTS_PER_TENANT, MAX_VERSIONS_PER_AGENT, type RegisteredAgent } from '../../domain/agents.js';
import type { AgentConfig } from '../../domain/definition.js';
import type { AgentRegistry, Page } from '../../domain/ports.js';
import {
  type AgentRow,
  conflict,
  type HistoryRow,
  pageOf,
  type SavingsRow,
  type StrategyRow,
  toAgent,
  toAgentRunSums,
  tooManyAgents,
  tooManyVersions,
  toSavingsSums,
  toStrategySums,
} from '../agent-rows.js';
import { decodeKeyset } from '../keyset.js';
import type { Tx } from './analytics-writes.js';
import { inTransaction, timeBound } from './transaction.js';

/**
 * The agent registry on PostgreSQL (migrations/postgres/0020; agent uses: 0003, written with the
 * workflow's creation by analytics-writes.ts), with the SQLite store's versions and retire
 * semantics (src/store/sqlite/agents.repo.ts). Every write of a tenant's registry runs in a
 * transaction that first takes that tenant's advisory lock, so instances creating the same name at
 * once are ordered: one creates it, the others find it and answer CONFLICT; the version numbering
 * and the per-tenant agent cap hold the same way. The lock is per tenant, not per name, because
 * the cap counts all of a tenant's names; registry writes are rare and short.
 */

const COLUMNS = 'name, version, role, config, created_at';
/** First key of the registry's advisory locks (two-int keys are a keyspace apart from the one-bigint ones). */
const REGISTRY_LOCK = 0x61_67_6e_74; // "agnt"

const lockTenant = (tx: Tx, tenantId: string) =>
  tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [REGISTRY_LOCK, tenantId]);

const INT4_MAX = 2_147_483_647;

async function current(tx: Tx, tenantId: string, name: string): Promise<AgentRow | undefined> {
  const { rows } = await tx.query<AgentRow>(
    `SELECT ${COLUMNS} FROM agents WHERE tenant_id = $1 AND name = $2 AND deleted_at IS NULL
      ORDER BY version DESC LIMIT 1`,
    [tenantId, name],
  );
  return rows[0];
}

async function liveNames(tx: Tx, tenantId: string): Promise<AgentRow[]> {
  const { rows } = await tx.query<AgentRow>(
    `SELECT DISTINCT ON (name) ${COLUMNS} FROM agents WHERE tenant_id = $1 AND deleted_at IS NULL
      ORDER BY name, version DESC`,
    [tenantId],
  );
  return rows;
}

export function createPostgresAgentRegistry(pool: pg.Pool, now: () => number): AgentRegistry {
  /** Inserts the next version of `name` (inside a transaction holding the tenant's lock). */
  async function insertNext(tx: Tx, tenantId: string, name: string, config: AgentConfig): Promise<RegisteredAgent> {
    const { rows } = await tx.query<{ last: number | null }>(
      'SELECT max(version) AS last FROM agents WHERE tenant_id = $1 AND name = $2',
      [tenantId, name],
    );
    const version = (rows[0]?.last ?? 0) + 1;
    if (version > MAX_VERSIONS_PER_AGENT) throw tooManyVersions(name);
    const createdAt = now();
    await tx.query(
      'INSERT INTO agents (tenant_id, name, version, role, config, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [tenantId, name, version, config.role ?? null, JSON.stringify(config), createdAt],
    );
    return { name, version, role: config.role ?? null, config, createdAt };
  }

  const range = (filter: { from?: number; to?: number }) => [
    timeBound(filter.from ?? 0, '>='),
    timeBound(filter.to ?? Number.MAX_SAFE_INTEGER, '<='),
  ];

  return {
    create(tenantId, name, config) {
      return inTransaction(pool, async (tx) => {
        await lockTenant(tx, tenantId);
        if (await current(tx, tenantId, name)) throw conflict(name);
        const { rows } = await tx.query<{ live: number }>(
          'SELECT count(DISTINCT name) AS live FROM agents WHERE tenant_id = $1 AND deleted_at IS NULL',
          [tenantId],
        );
        if ((rows[0]?.live ?? 0) >= MAX_AGENTS_PER_TENANT) throw tooManyAgents();
        return insertNext(tx, tenantId, name, config);
      });
    },

    async list(tenantId, { cursor, limit, role }): Promise<Page<RegisteredAgent>> {
      const after = cursor === null ? '' : String(decodeKeyset(cursor, ['string'])[0]);
      if (role !== undefined) {
        // At most MAX_AGENTS_PER_TENANT live names: filtered here, paged the same way.
        const all = (await liveNames(pool, tenantId)).filter((row) => row.role === role && row.name > after);
        return pageOf(all, limit);
      }
      const { rows } = await pool.query<AgentRow>(
        `SELECT DISTINCT ON (name) ${COLUMNS} FROM agents WHERE tenant_id = $1 AND deleted_at IS NULL AND name > $2
          ORDER BY name, version DESC LIMIT $3`,
        [tenantId, after, limit + 1],
      );
      return pageOf(rows, limit);
    },

    async get(tenantId, name, version) {
      const row = await current(pool, tenantId, name);
      if (row === undefined) return undefined;
      if (version === undefined) return toAgent(row);
      // No stored version is fractional or past INTEGER: SQLite finds none, and PostgreSQL would refuse the bind.
      if (!Number.isInteger(version) || Math.abs(version) > INT4_MAX) return undefined;
      const { rows } = await pool.query<AgentRow>(
        `SELECT ${COLUMNS} FROM agents WHERE tenant_id = $1 AND name = $2 AND version = $3`,
        [tenantId, name, version],
      );
      return rows[0] === undefined ? undefined : toAgent(rows[0]);
    },

    async versions(tenantId, name) {
      const { rows } = await pool.query<AgentRow>(
        `SELECT ${COLUMNS} FROM agents WHERE tenant_id = $1 AND name = $2 AND deleted_at IS NULL ORDER BY version`,
        [tenantId, name],
      );
      return rows.map(toAgent);
    },

    update(tenantId, name, config) {
      return inTransaction(pool, async (tx) => {
        await lockTenant(tx, tenantId);
        return (await current(tx, tenantId, name)) ? insertNext(tx, tenantId, name, config) : undefined;
      });
    },

    retire(tenantId, name) {
      return inTransaction(pool, async (tx) => {
        await lockTenant(tx, tenantId);
        // One tombstone per name, its last version with the config emptied (sqlite/agents.repo.ts says why).
        const { rowCount } = await tx.query(
          `UPDATE agents SET deleted_at = $1, config = '{}', role = NULL
            WHERE tenant_id = $2 AND name = $3 AND deleted_at IS NULL
              AND version = (SELECT max(a.version) FROM agents a WHERE a.tenant_id = $2 AND a.name = $3)`,
          [now(), tenantId, name],
        );
        if (!rowCount) return false;
        await tx.query(
          `DELETE FROM agents WHERE tenant_id = $1 AND name = $2
             AND version < (SELECT max(version) FROM agents WHERE tenant_id = $1 AND name = $2)`,
          [tenantId, name],
        );
        return true;
      });
    },

    async ofRole(tenantId, role) {
      return (await liveNames(pool, tenantId)).filter((row) => row.role === role).map(toAgent);
    },

    async rewardHistory(tenantId, agents, taskType, complexity) {
      // Each rewarded run once per agent, with its outcome and cost (the efficiency row is written with the reward).
      const { rows } = await pool.query<HistoryRow>(
        `SELECT u.agent, count(*) AS runs, sum(r.aggregate_reward) AS reward_sum,
                count(*) FILTER (WHERE e.outcome = 'success') AS successes,
                sum(e.cost_usd) AS cost_usd, sum(e.simulated_cost_usd) AS simulated_cost_usd
           FROM (SELECT DISTINCT workflow_id, agent FROM agent_uses
                  WHERE tenant_id = $1 AND task_type = $2 AND complexity = $3 AND agent = ANY($4::text[])) u
           JOIN rewards r ON r.workflow_id = u.workflow_id
           JOIN efficiency e ON e.workflow_id = u.workflow_id
          GROUP BY u.agent`,
        [tenantId, taskType, complexity, [...agents]],
      );
      return toAgentRunSums(rows);
    },

    async strategySums(tenantId, filter) {
      const typed = filter.taskType !== undefined;
      const { rows } = await pool.query<StrategyRow>(
        `SELECT u.strategy, count(*) AS runs, count(r.workflow_id) AS rewarded,
                coalesce(sum(r.aggregate_reward), 0) AS reward_sum,
                count(*) FILTER (WHERE e.outcome = 'success') AS successes,
                sum(e.cost_usd) AS cost_usd, sum(e.simulated_cost_usd) AS simulated_cost_usd,
                sum(u.saved_usd) AS saved_usd, sum(u.saved_simulated_usd) AS saved_simulated_usd
           FROM (SELECT workflow_id, strategy, sum(saved_usd) AS saved_usd, sum(saved_simulated_usd) AS saved_simulated_usd
                   FROM agent_uses WHERE tenant_id = $1 AND strategy IS NOT NULL GROUP BY workflow_id, strategy) u
           JOIN efficiency e ON e.workflow_id = u.workflow_id
           LEFT JOIN rewards r ON r.workflow_id = u.workflow_id
          WHERE e.created_at >= $2 AND e.created_at <= $3 ${typed ? 'AND e.task_type = $4' : ''}
          GROUP BY u.strategy ORDER BY u.strategy COLLATE "C"`,
        [tenantId, ...range(filter), ...(typed ? [filter.taskType] : [])],
      );
      return rows.map(toStrategySums);
    },

    async savingsSums(tenantId, filter) {
      // Savings are per selecting use (additive: each compares expected costs per run), runs per workflow.
      const typed = filter.taskType !== undefined;
      const { rows } = await pool.query<SavingsRow>(
        `SELECT u.task_type, u.strategy, count(DISTINCT u.workflow_id) AS runs, count(u.saved_usd) AS counted,
                coalesce(sum(u.saved_usd), 0) AS saved_usd, coalesce(sum(u.saved_simulated_usd), 0) AS saved_simulated_usd
           FROM agent_uses u JOIN efficiency e ON e.workflow_id = u.workflow_id
          WHERE u.tenant_id = $1 AND u.strategy IS NOT NULL AND e.created_at >= $2 AND e.created_at <= $3
                ${typed ? 'AND e.task_type = $4' : ''}
          GROUP BY u.task_type, u.strategy ORDER BY u.task_type COLLATE "C", u.strategy COLLATE "C"`,
        [tenantId, ...range(filter), ...(typed ? [filter.taskType] : [])],
      );
      return rows.map(toSavingsSums);
    },

    async recentStrategySums(tenantId, taskType, perStrategy) {
      // Each strategy's newest uses through agent_uses_recent_by_strategy, LIMIT first: bounded by
      // perStrategy whatever the tenant's history holds. All strategies in one statement.
      const { rows } = await pool.query<StrategyRow>(
        `SELECT s.strategy, t.* FROM unnest($3::text[]) WITH ORDINALITY AS s (strategy, i)
           CROSS JOIN LATERAL (
             SELECT count(*) AS runs, count(r.workflow_id) AS rewarded,
                    coalesce(sum(r.aggregate_reward), 0) AS reward_sum,
                    count(*) FILTER (WHERE e.outcome = 'success') AS successes,
                    coalesce(sum(e.cost_usd), 0) AS cost_usd, coalesce(sum(e.simulated_cost_usd), 0) AS simulated_cost_usd,
                    0 AS saved_usd, 0 AS saved_simulated_usd
               FROM (SELECT DISTINCT workflow_id FROM
                      (SELECT workflow_id FROM agent_uses
                        WHERE tenant_id = $1 AND task_type = $2 AND strategy = s.strategy AND strategy IS NOT NULL
                        ORDER BY created_at DESC LIMIT $4) newest) u
               JOIN efficiency e ON e.workflow_id = u.workflow_id
               LEFT JOIN rewards r ON r.workflow_id = u.workflow_id) t
          WHERE t.runs > 0 ORDER BY s.i`,
        // SQLite reads a negative LIMIT as none; PostgreSQL's is NULL.
        [tenantId, taskType, [...SELECTION_STRATEGIES], perStrategy < 0 ? null : perStrategy],
      );
      return rows.map(toStrategySums);
    },
  };
}
