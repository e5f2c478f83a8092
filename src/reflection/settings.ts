import { type AgentConfig, DEFAULTS, type PromptNode, type WorkflowDefinition } from '../domain/definition.js';

/**
 * Whether each reflection level is on, and where that was decided (groundswell's `isEnabled`,
 * docs/workflows.md#reflection). The run (ReflectionLedger, the prompt request) and the
 * `GET /v1/workflows/{id}/reflection` read take their answers from here, so what the API says is
 * what the run does. Pure: no I/O.
 */

/** Where a level's setting came from: the node, its agent, the workflow options, or the default (off). */
export type SettingSource = 'prompt' | 'agent' | 'workflow' | 'default';

export interface LevelSetting {
  enabled: boolean;
  source: SettingSource;
}

/** Workflow level: `options.reflection.enabled`, off by default. */
export function workflowLevelOf(definition: WorkflowDefinition): LevelSetting {
  const enabled = definition.options?.reflection?.enabled;
  return enabled === undefined ? { enabled: false, source: 'default' } : { enabled, source: 'workflow' };
}

/** Agent level (the reflection prefix on the system prompt): the agent's `enableReflection`, off by default. */
export function agentLevelOf(agent: AgentConfig | undefined): LevelSetting {
  const enabled = agent?.enableReflection;
  return enabled === undefined ? { enabled: false, source: 'default' } : { enabled, source: 'agent' };
}

/** Prompt level (re-ask after a bad answer): on the prompt, else its agent, else the workflow level. */
export function promptLevelOf(
  node: PromptNode,
  agent: AgentConfig | undefined,
  definition: WorkflowDefinition,
): LevelSetting {
  if (node.enableReflection !== undefined) return { enabled: node.enableReflection, source: 'prompt' };
  if (agent?.enableReflection !== undefined) return { enabled: agent.enableReflection, source: 'agent' };
  return workflowLevelOf(definition);
}

export interface ReflectionBudget {
  /** Attempts of a node, the first included, that workflow-level reflection may reach. */
  maxAttempts: number;
  retryDelayMs: number;
}

export function reflectionBudgetOf(definition: WorkflowDefinition): ReflectionBudget {
  const options = definition.options?.reflection;
  return {
    maxAttempts: options?.maxAttempts ?? DEFAULTS.reflection.maxAttempts,
    retryDelayMs: options?.retryDelayMs ?? DEFAULTS.reflection.retryDelayMs,
  };
}
