import { type AgentConfig, agentNamed, DEFAULTS, type PromptNode } from '../domain/definition.js';
import { AppError } from '../domain/errors.js';
import type { LlmRequest } from '../domain/llm.js';
import type { ResolvedModel } from '../domain/ports.js';
import { withAgentReflection } from '../reflection/policy.js';
import { responseFormatInstruction } from './response-format.js';
import type { Run } from './run.js';
import { renderText, renderValue } from './templates.js';
import { buildUserMessage } from './user-message.js';

/** Inputs a workflow-level reflection may revise for the next attempt (DESIGN §5). */
export interface PromptInputs {
  /** The rendered `data`. */
  data: Record<string, unknown> | undefined;
  /** The rendered agent system prompt, before the reflection prefix and the responseFormat instruction. */
  system: string | undefined;
}

export interface PreparedPrompt {
  agent: AgentConfig;
  model: ResolvedModel;
  inputs: PromptInputs;
  /** The rendered user message of the first turn. */
  user: string;
  request: LlmRequest;
}

export function renderPromptInputs(run: Run, node: PromptNode, agent: AgentConfig): PromptInputs {
  return {
    data: node.data && (renderValue(node.data, run.templateScope) as Record<string, unknown>),
    system: agent.system === undefined ? undefined : renderText(agent.system, run.templateScope),
  };
}

export function agentOf(run: Run, node: PromptNode): AgentConfig {
  const agent = agentNamed(run.agents, node.agent);
  if (!agent) throw new AppError('MISSING_CONTEXT', `agent "${node.agent}" is not defined`);
  return agent;
}

/**
 * The effective provider request of a prompt's first turn. Precedence (DESIGN §3): call-time
 * overrides > agent config > defaults. `revised` replaces the rendered inputs after a reflection.
 */
export function preparePrompt(run: Run, node: PromptNode, revised?: PromptInputs): PreparedPrompt {
  const { services } = run;
  const agent = agentOf(run, node);
  const model = services.models.resolve(node.overrides?.model ?? agent.model ?? services.models.defaultModel);
  const inputs = revised ?? renderPromptInputs(run, node, agent);

  let system = agent.enableReflection ? withAgentReflection(inputs.system) : inputs.system;
  if (node.responseFormat) {
    const instruction = responseFormatInstruction(node.responseFormat);
    system = system ? `${system}\n\n${instruction}` : instruction;
  }
  const user = buildUserMessage(renderText(node.user, run.templateScope), inputs.data);
  const request: LlmRequest = {
    model: model.providerModel,
    messages: [{ role: 'user', content: user }],
    maxTokens: node.overrides?.maxTokens ?? agent.maxTokens ?? DEFAULTS.maxTokens,
  };
  if (system !== undefined) request.system = system;
  const temperature = node.overrides?.temperature ?? agent.temperature;
  if (temperature !== undefined) request.temperature = temperature;
  const stop = node.overrides?.stop ?? agent.stop;
  if (stop !== undefined) request.stop = stop;
  if (agent.tools && agent.tools.length > 0) request.tools = services.tools.definitions(agent.tools);
  if (node.responseFormat) request.responseFormat = node.responseFormat;
  if (agent.simulate && model.provider === 'sim') {
    request.simulate = { ...agent.simulate, scriptKey: `${run.workflow.id}:${node.agent}` };
  }
  return { agent, model, inputs, user, request };
}

export function nodeDeadlineError(node: PromptNode, timeoutMs: number): AppError {
  return new AppError('NODE_TIMEOUT', `node "${node.name}" did not finish within ${timeoutMs} ms`);
}
