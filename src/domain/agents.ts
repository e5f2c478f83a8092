import type { SelectionStrategy } from './agent-selection.js';
import type { AgentConfig } from './definition.js';
import type { AgentRole } from './names.js';
import { redactSecrets, redactValue } from './redact.js';
import type { Complexity } from './task.js';

/**
 * The agent registry (docs/design.md#workflow-definitions, docs/design.md#http-api-conventions): a tenant's named
 * agent configs, versioned. Every version is
 * kept; a PUT adds version n + 1, a DELETE retires the name (its versions stay for the runs that
 * used them, and a new POST of the name continues the numbering).
 */

/** Live (not retired) agent names one tenant may hold. */
export const MAX_AGENTS_PER_TENANT = 200;
/** Versions one name may have, retired ones included. */
export const MAX_VERSIONS_PER_AGENT = 100;

export interface RegisteredAgent {
  name: string;
  version: number;
  config: AgentConfig;
  role: AgentRole | null;
  /** Epoch ms this version was created. */
  createdAt: number;
}

/**
 * Which agent one prompt node of a workflow ran with, recorded at submission for prompts that use a
 * registered agent or a selection: the workflow's aggregate reward is attributed to each agent it
 * used (docs/design.md#complexity-allocation-selection-and-review), once per workflow.
 */
export interface AgentUse {
  workflowId: string;
  tenantId: string;
  /** The node's name (`<child workflow node>/<name>` inside child definitions). */
  node: string;
  agent: string;
  /** Registry version; null for an agent of the definition. */
  version: number | null;
  /** null: the prompt named its agent (no selection). */
  strategy: SelectionStrategy | null;
  role: AgentRole | null;
  taskType: string;
  complexity: Complexity;
  /** Every candidate's score when selected. */
  scores: Record<string, number> | null;
  /**
   * When selected: the best-quality candidate and the expected cost per run saved against it, real
   * and simulated money apart (docs/workflows.md#counterfactual-savings); null when unknown.
   */
  reference: string | null;
  savedUsd: number | null;
  savedSimulatedUsd: number | null;
  createdAt: number;
}

/** Rewarded runs of one agent on one task type and complexity (each workflow once). */
export interface AgentRunSums {
  runs: number;
  /** Σ aggregate reward (each in [−1, 1]). */
  rewardSum: number;
  /** Runs whose outcome was success. */
  successes: number;
  /** Σ the runs' real model cost. */
  costUsd: number;
  /** Σ what their sim/* calls would have cost (not money). */
  simulatedCostUsd: number;
}

export interface SelectionFilter {
  /** Epoch ms, inclusive, on the run's completion. */
  from?: number;
  to?: number;
  taskType?: string;
}

/** The counterfactual savings of one strategy on one task type, over the selecting uses of a window. */
export interface SavingsSums {
  taskType: string;
  strategy: SelectionStrategy;
  /** Ended runs with a selecting use of the strategy (each workflow once). */
  runs: number;
  /** Selecting uses with a known saving (a reference and a chosen candidate with history). */
  counted: number;
  savedUsd: number;
  savedSimulatedUsd: number;
}

/** One strategy's runs in a window (a workflow counts once per strategy it selected with). */
export interface StrategySums {
  strategy: SelectionStrategy;
  runs: number;
  rewarded: number;
  rewardSum: number;
  successes: number;
  costUsd: number;
  simulatedCostUsd: number;
  /** Σ the counterfactual savings of its selecting uses (docs/workflows.md#counterfactual-savings). */
  savedUsd: number;
  savedSimulatedUsd: number;
}

/**
 * One agent's free text — `system` and the `simulate` script — redacted: for a definition's agents,
 * and for an agent registered under a name (its versions are kept, so a token pasted into its system
 * prompt would be kept with them). Copy-on-write.
 */
export function redactAgent(agent: AgentConfig): AgentConfig {
  const system = agent.system === undefined ? undefined : redactSecrets(agent.system);
  const simulate = redactValue(agent.simulate) as AgentConfig['simulate'];
  if (system === agent.system && simulate === agent.simulate) return agent;
  return {
    ...agent,
    ...(system === undefined ? {} : { system }),
    ...(simulate === undefined ? {} : { simulate }),
  };
}
