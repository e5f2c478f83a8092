import { type AgentConfig, agentNameOf, DEFAULTS, type PromptNode } from '../../../domain/definition.js';
import { AppError } from '../../../domain/errors.js';
import type { LlmRequest } from '../../../domain/llm.js';
import type { ResolvedModel } from '../../../domain/ports.js';
import { renderText, renderValue } from '../../../domain/templates.js';
import { withAgentReflection } from '../../../reflection/policy.js';
import { agentLevelOf } from '../../../reflection/settings.js';
import { tierFor } from '../../../routing/allocation.js';
import type { ModelGateway, PromptInputs, RunView, ToolBox } from '../../node-context.js';
import { buildUserMessage, withPatterns } from '../user-message.js';
import { responseFormatInstruction } from './response-format.js';

export interface PreparedPrompt {
  agent: AgentConfig;
  model: ResolvedModel;
  inputs: PromptInputs;
  /** The rendered user message of the first turn. */
  user: string;
  request: LlmRequest;
}

export function agentOf(view: RunView, node: PromptNode): AgentConfig {
  const agent = view.agent(agentNameOf(node));
  if (!agent) throw new AppError('MISSING_CONTEXT', `agent "${agentNameOf(node)}" is not defined`);
  return agent;
}

export function renderPromptInputs(view: RunView, node: PromptNode): PromptInputs {
  const agent = agentOf(view, node);
  return {
    data: node.data && (renderValue(node.data, view.templateScope) as Record<string, unknown>),
    system: agent.system === undefined ? undefined : renderText(agent.system, view.templateScope),
  };
}

/**
 * The effective provider request of a prompt's first turn. Precedence (docs/design.md#workflow-definitions): call-time
 * overrides > agent config > defaults. `revised` replaces the rendered inputs after a reflection.
 */
export function preparePrompt(
  view: RunView,
  facets: { models: ModelGateway; tools: ToolBox },
  node: PromptNode,
  revised?: PromptInputs,
): PreparedPrompt {
  const agent = agentOf(view, node);
  const model = facets.models.resolve(modelSpecOf(view, node, agent));
  const inputs = revised ?? renderPromptInputs(view, node);

  let system = agentLevelOf(agent).enabled ? withAgentReflection(inputs.system) : inputs.system;
  // A retrieval loop's answers are actions or tool calls: it states the final answer's schema itself.
  if (node.responseFormat && !node.retrieval) {
    const instruction = responseFormatInstruction(node.responseFormat);
    system = system ? `${system}\n\n${instruction}` : instruction;
  }
  const user = withPatterns(
    buildUserMessage(renderText(node.user, view.templateScope), inputs.data),
    node.resolved?.patterns,
  );
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
  if (agent.tools && agent.tools.length > 0) request.tools = facets.tools.definitions(agent.tools);
  if (node.responseFormat && !node.retrieval) request.responseFormat = node.responseFormat;
  if (agent.simulate && model.provider === 'sim') {
    request.simulate = { ...agent.simulate, scriptKey: `${view.workflow.id}:${agentNameOf(node)}` };
  }
  return { agent, model, inputs, user, request };
}

/**
 * The prompt's model spec; `auto` is the tier the allocation gives the agent's role
 * (docs/design.md#complexity-allocation-selection-and-review).
 */
function modelSpecOf(view: RunView, node: PromptNode, agent: AgentConfig): string | undefined {
  const spec = node.overrides?.model ?? agent.model;
  return spec === 'auto' ? tierFor(agent.role ?? 'development', view.complexity) : spec;
}

export function nodeDeadlineError(node: PromptNode, timeoutMs: number): AppError {
  return new AppError('NODE_TIMEOUT', `node "${node.name}" did not finish within ${timeoutMs} ms`);
}
