import {
  type AgentRunSums,
  MAX_AGENTS_PER_TENANT,
  MAX_VERSIONS_PER_AGENT,
  type RegisteredAgent,
  type SavingsSums,
  type StrategySums,
} from '../domain/agents.js';
import { AgentConfigSchema } from '../domain/definition.js';
import { AppError } from '../domain/errors.js';
import type { AgentRole } from '../domain/names.js';
import type { Page } from '../domain/ports.js';
import { encodeKeyset } from './keyset.js';

/**
 * The agent registry's rows and the selection sums as both stores read them (migrations/sqlite/0013,
 * migrations/postgres/0020): one mapping, driver-free, and the registry's errors.
 */

export interface AgentRow {
  name: string;
  version: number;
  role: AgentRole | null;
  config: string;
  created_at: number;
}

export const toAgent = (row: AgentRow): RegisteredAgent => ({
  name: row.name,
  version: row.version,
  role: row.role,
  config: AgentConfigSchema.parse(JSON.parse(row.config)),
  createdAt: row.created_at,
});

/** The first `limit` rows; a cursor after the last of them when more follow. */
export function pageOf(rows: AgentRow[], limit: number): Page<RegisteredAgent> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items: items.map(toAgent), nextCursor: rows.length > limit && last ? encodeKeyset([last.name]) : null };
}

function limitExceeded(path: string, message: string): AppError {
  return new AppError('LIMIT_EXCEEDED', `${path}: ${message}`, { details: [{ path, message }] });
}

export function conflict(name: string): AppError {
  return new AppError('CONFLICT', `an agent named "${name}" exists; PUT /v1/agents/${name} adds a version`);
}

export function tooManyVersions(name: string): AppError {
  return limitExceeded('name', `agent "${name}" has ${MAX_VERSIONS_PER_AGENT} versions, the most one name may have`);
}

export function tooManyAgents(): AppError {
  return limitExceeded('name', `you have ${MAX_AGENTS_PER_TENANT} agents, the most a tenant may register`);
}

export interface HistoryRow {
  agent: string;
  runs: number;
  reward_sum: number;
  successes: number;
  cost_usd: number;
  simulated_cost_usd: number;
}

export interface SavingsRow {
  task_type: string;
  strategy: SavingsSums['strategy'];
  runs: number;
  counted: number;
  saved_usd: number;
  saved_simulated_usd: number;
}

export interface StrategyRow {
  strategy: StrategySums['strategy'];
  runs: number;
  rewarded: number;
  reward_sum: number;
  successes: number;
  cost_usd: number;
  simulated_cost_usd: number;
  saved_usd: number | null;
  saved_simulated_usd: number | null;
}

export function toStrategySums(row: StrategyRow): StrategySums {
  return {
    strategy: row.strategy,
    runs: row.runs,
    rewarded: row.rewarded,
    rewardSum: row.reward_sum,
    successes: row.successes,
    costUsd: row.cost_usd,
    simulatedCostUsd: row.simulated_cost_usd,
    savedUsd: row.saved_usd ?? 0,
    savedSimulatedUsd: row.saved_simulated_usd ?? 0,
  };
}

export function toAgentRunSums(rows: readonly HistoryRow[]): Map<string, AgentRunSums> {
  const sums = new Map<string, AgentRunSums>();
  for (const row of rows) {
    sums.set(row.agent, {
      runs: row.runs,
      rewardSum: row.reward_sum,
      successes: row.successes,
      costUsd: row.cost_usd,
      simulatedCostUsd: row.simulated_cost_usd,
    });
  }
  return sums;
}

export function toSavingsSums(row: SavingsRow): SavingsSums {
  return {
    taskType: row.task_type,
    strategy: row.strategy,
    runs: row.runs,
    counted: row.counted,
    savedUsd: row.saved_usd,
    savedSimulatedUsd: row.saved_simulated_usd,
  };
}
