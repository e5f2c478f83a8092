import { SELECTION_STRATEGIES } from '../../domain/agent-selection.js';
import {
  type AgentUse,
  MAX_AGENTS_PER_TENANT,
  MAX_VERSIONS_PER_AGENT,
  type RegisteredAgent,
  type StrategySums,
} from '../../domain/agents.js';
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
import type { Db } from './db.js';
import type { GroupCommitter } from './group-commit.js';

/** The agent registry and the agent-use history (migrations/sqlite/0013_agents.sql; retiring: see `retire`). */

/** The insert of agent_uses rows, run inside the workflow's own insert (workflows.repo.ts). */
export function createAgentUseRows(db: Db): { insert(uses: readonly AgentUse[]): void } {
  const insert = db.prepare(
    `INSERT INTO agent_uses (workflow_id, node, tenant_id, agent, version, strategy, role, task_type, complexity,
       scores, reference, saved_usd, saved_simulated_usd, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  return {
    insert(uses) {
      for (const u of uses) {
        insert.run(
          u.workflowId,
          u.node,
          u.tenantId,
          u.agent,
          u.version,
          u.strategy,
          u.role,
          u.taskType,
          u.complexity,
          u.scores === null ? null : JSON.stringify(u.scores),
          u.reference,
          u.savedUsd,
          u.savedSimulatedUsd,
          u.createdAt,
        );
      }
    },
  };
}

export function createSqliteAgentRegistry(db: Db, committer: GroupCommitter, now: () => number): AgentRegistry {
  const COLUMNS = 'name, version, role, config, created_at';
  // The newest version of a live name: retiring marks every version, so live rows are the name's own.
  const selectCurrent = db.prepare<[string, string], AgentRow>(
    `SELECT ${COLUMNS} FROM agents WHERE tenant_id = ? AND name = ? AND deleted_at IS NULL
     ORDER BY version DESC LIMIT 1`,
  );
  const selectVersion = db.prepare<[string, string, number], AgentRow>(
    `SELECT ${COLUMNS} FROM agents WHERE tenant_id = ? AND name = ? AND version = ?`,
  );
  const selectVersions = db.prepare<[string, string], AgentRow>(
    `SELECT ${COLUMNS} FROM agents WHERE tenant_id = ? AND name = ? AND deleted_at IS NULL ORDER BY version`,
  );
  // SQLite takes the bare columns of a max() aggregate from the row holding the maximum.
  const selectLive = db.prepare<[string, string, number], AgentRow>(
    `SELECT name, max(version) AS version, role, config, created_at FROM agents
     WHERE tenant_id = ? AND deleted_at IS NULL AND name > ? GROUP BY name ORDER BY name LIMIT ?`,
  );
  const selectAllLive = db.prepare<[string], AgentRow>(
    `SELECT name, max(version) AS version, role, config, created_at FROM agents
     WHERE tenant_id = ? AND deleted_at IS NULL GROUP BY name ORDER BY name`,
  );
  const countLive = db
    .prepare<[string], number>('SELECT count(DISTINCT name) FROM agents WHERE tenant_id = ? AND deleted_at IS NULL')
    .pluck();
  const lastVersion = db
    .prepare<[string, string], number | null>('SELECT max(version) FROM agents WHERE tenant_id = ? AND name = ?')
    .pluck();
  const insert = db.prepare(
    'INSERT INTO agents (tenant_id, name, version, role, config, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  // Retiring keeps one row per name, its last version with the config emptied (a tombstone), so a
  // new POST of the name continues the numbering while create/delete pairs cannot pile up versions
  // (400 pairs of a large config grew the database by 43 MB). Runs need no agent row: submission
  // copies the config into the stored definition. The retention sweep drops tombstones by age.
  const retire = db.prepare<[number, string, string]>(
    `UPDATE agents SET deleted_at = ?, config = '{}', role = NULL
     WHERE tenant_id = ? AND name = ? AND deleted_at IS NULL
       AND version = (SELECT max(a.version) FROM agents a WHERE a.tenant_id = agents.tenant_id AND a.name = agents.name)`,
  );
  const dropOlderVersions = db.prepare<[string, string, string, string]>(
    `DELETE FROM agents WHERE tenant_id = ? AND name = ?
       AND version < (SELECT max(version) FROM agents WHERE tenant_id = ? AND name = ?)`,
  );
  // Each rewarded run once per agent, with its outcome and cost (the efficiency row is written with the reward).
  const history = db.prepare<[string, string, string, string], HistoryRow>(
    `SELECT u.agent, count(*) AS runs, sum(r.aggregate_reward) AS reward_sum, sum(e.outcome = 'success') AS successes,
            sum(e.cost_usd) AS cost_usd, sum(e.simulated_cost_usd) AS simulated_cost_usd
       FROM (SELECT DISTINCT workflow_id, agent FROM agent_uses
              WHERE tenant_id = ? AND task_type = ? AND complexity = ? AND agent IN (SELECT value FROM json_each(?))) u
       JOIN rewards r ON r.workflow_id = u.workflow_id
       JOIN efficiency e ON e.workflow_id = u.workflow_id
      GROUP BY u.agent`,
  );
  const strategyQuery = (typed: boolean) =>
    db.prepare<unknown[], StrategyRow>(
      `SELECT u.strategy, count(*) AS runs, count(r.workflow_id) AS rewarded,
              coalesce(sum(r.aggregate_reward), 0) AS reward_sum, sum(e.outcome = 'success') AS successes,
              sum(e.cost_usd) AS cost_usd, sum(e.simulated_cost_usd) AS simulated_cost_usd,
              sum(u.saved_usd) AS saved_usd, sum(u.saved_simulated_usd) AS saved_simulated_usd
         FROM (SELECT workflow_id, strategy, sum(saved_usd) AS saved_usd, sum(saved_simulated_usd) AS saved_simulated_usd
                 FROM agent_uses WHERE tenant_id = ? AND strategy IS NOT NULL GROUP BY workflow_id, strategy) u
         JOIN efficiency e ON e.workflow_id = u.workflow_id
         LEFT JOIN rewards r ON r.workflow_id = u.workflow_id
        WHERE e.created_at >= ? AND e.created_at <= ? ${typed ? 'AND e.task_type = ?' : ''}
        GROUP BY u.strategy ORDER BY u.strategy`,
    );
  // One strategy's newest uses through agent_uses_recent_by_strategy (migrations/sqlite/0024), LIMIT first:
  // the read is bounded by the window whatever the tenant's history holds.
  const recentStrategy = db.prepare<[string, string, string, number], Omit<StrategyRow, 'strategy'>>(
    `SELECT count(*) AS runs, count(r.workflow_id) AS rewarded,
            coalesce(sum(r.aggregate_reward), 0) AS reward_sum, coalesce(sum(e.outcome = 'success'), 0) AS successes,
            coalesce(sum(e.cost_usd), 0) AS cost_usd, coalesce(sum(e.simulated_cost_usd), 0) AS simulated_cost_usd,
            0 AS saved_usd, 0 AS saved_simulated_usd
       FROM (SELECT DISTINCT workflow_id FROM
              (SELECT workflow_id FROM agent_uses INDEXED BY agent_uses_recent_by_strategy
                WHERE tenant_id = ? AND task_type = ? AND strategy = ? AND strategy IS NOT NULL
                ORDER BY created_at DESC LIMIT ?)) u
       JOIN efficiency e ON e.workflow_id = u.workflow_id
       LEFT JOIN rewards r ON r.workflow_id = u.workflow_id`,
  );
  const strategyAll = strategyQuery(false);
  const strategyOfType = strategyQuery(true);
  // Savings are per selecting use (additive: each compares expected costs per run), runs per workflow.
  const savingsQuery = (typed: boolean) =>
    db.prepare<unknown[], SavingsRow>(
      `SELECT u.task_type, u.strategy, count(DISTINCT u.workflow_id) AS runs, count(u.saved_usd) AS counted,
              coalesce(sum(u.saved_usd), 0) AS saved_usd, coalesce(sum(u.saved_simulated_usd), 0) AS saved_simulated_usd
         FROM agent_uses u JOIN efficiency e ON e.workflow_id = u.workflow_id
        WHERE u.tenant_id = ? AND u.strategy IS NOT NULL AND e.created_at >= ? AND e.created_at <= ?
              ${typed ? 'AND e.task_type = ?' : ''}
        GROUP BY u.task_type, u.strategy ORDER BY u.task_type, u.strategy`,
    );
  const savingsAll = savingsQuery(false);
  const savingsOfType = savingsQuery(true);

  /** Inserts the next version of `name` (inside a transaction). */
  function insertNext(tenantId: string, name: string, config: AgentConfig): RegisteredAgent {
    const version = (lastVersion.get(tenantId, name) ?? 0) + 1;
    if (version > MAX_VERSIONS_PER_AGENT) throw tooManyVersions(name);
    const createdAt = now();
    insert.run(tenantId, name, version, config.role ?? null, JSON.stringify(config), createdAt);
    return { name, version, role: config.role ?? null, config, createdAt };
  }

  return {
    create(tenantId, name, config) {
      return committer.run(() => {
        if (selectCurrent.get(tenantId, name)) throw conflict(name);
        if ((countLive.get(tenantId) ?? 0) >= MAX_AGENTS_PER_TENANT) throw tooManyAgents();
        return insertNext(tenantId, name, config);
      });
    },

    async list(tenantId, { cursor, limit, role }): Promise<Page<RegisteredAgent>> {
      const after = cursor === null ? '' : String(decodeKeyset(cursor, ['string'])[0]);
      if (role !== undefined) {
        // At most MAX_AGENTS_PER_TENANT live names: filtered here, paged the same way.
        const all = selectAllLive.all(tenantId).filter((row) => row.role === role && row.name > after);
        return pageOf(all, limit);
      }
      return pageOf(selectLive.all(tenantId, after, limit + 1), limit);
    },

    async get(tenantId, name, version) {
      const current = selectCurrent.get(tenantId, name);
      if (current === undefined) return undefined;
      if (version === undefined) return toAgent(current);
      const row = selectVersion.get(tenantId, name, version);
      return row === undefined ? undefined : toAgent(row);
    },

    async versions(tenantId, name) {
      return selectVersions.all(tenantId, name).map(toAgent);
    },

    update(tenantId, name, config) {
      return committer.run(() => (selectCurrent.get(tenantId, name) ? insertNext(tenantId, name, config) : undefined));
    },

    retire(tenantId, name) {
      return committer.run(() => {
        if (retire.run(now(), tenantId, name).changes === 0) return false;
        dropOlderVersions.run(tenantId, name, tenantId, name);
        return true;
      });
    },

    async ofRole(tenantId, role) {
      return selectAllLive
        .all(tenantId)
        .filter((row) => row.role === role)
        .map(toAgent);
    },

    async rewardHistory(tenantId, agents, taskType, complexity) {
      return toAgentRunSums(history.all(tenantId, taskType, complexity, JSON.stringify(agents)));
    },

    async strategySums(tenantId, filter) {
      const range = [filter.from ?? 0, filter.to ?? Number.MAX_SAFE_INTEGER];
      const rows =
        filter.taskType === undefined
          ? strategyAll.all(tenantId, ...range)
          : strategyOfType.all(tenantId, ...range, filter.taskType);
      return rows.map(toStrategySums);
    },

    async savingsSums(tenantId, filter) {
      const range = [filter.from ?? 0, filter.to ?? Number.MAX_SAFE_INTEGER];
      const rows =
        filter.taskType === undefined
          ? savingsAll.all(tenantId, ...range)
          : savingsOfType.all(tenantId, ...range, filter.taskType);
      return rows.map(toSavingsSums);
    },

    async recentStrategySums(tenantId, taskType, perStrategy) {
      return SELECTION_STRATEGIES.flatMap((strategy): StrategySums[] => {
        const row = recentStrategy.get(tenantId, taskType, strategy, perStrategy);
        if (row === undefined || row.runs === 0) return [];
        return [toStrategySums({ ...row, strategy })];
      });
    },
  };
}
