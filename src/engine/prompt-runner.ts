import { DEFAULTS, type PromptNode } from '../domain/definition.js';
import { AppError } from '../domain/errors.js';
import {
  type LlmMessage,
  type LlmRequest,
  type LlmResponse,
  responseText,
  type ToolResultBlock,
  type ToolUseBlock,
} from '../domain/llm.js';
import type { ResolvedModel } from '../domain/ports.js';
import type { NodeRecord } from '../domain/records.js';
import { redactSecrets, redactValue } from '../domain/redact.js';
import { withDeadline } from './deadline.js';
import { responseFormatInstruction, validateAnswer } from './response-format.js';
import type { Run } from './run.js';
import { shuttingDownError } from './services.js';
import { renderText, renderValue } from './templates.js';
import { callWithRetry } from './transport-retry.js';
import { buildUserMessage } from './user-message.js';

/**
 * A prompt node: one agent call, or a multi-turn tool loop, under the node's deadline
 * (DESIGN §3, §10). Precedence: call-time overrides > agent config > defaults.
 */
export async function runPromptNode(
  run: Run,
  node: PromptNode,
  record: NodeRecord,
  signal: AbortSignal,
  attempt: number,
): Promise<unknown> {
  const { services } = run;
  const agent = run.agents[node.agent];
  if (!agent) throw new AppError('MISSING_CONTEXT', `agent "${node.agent}" is not defined`);
  const model = services.models.resolve(node.overrides?.model ?? agent.model ?? services.models.defaultModel);

  let system = agent.system === undefined ? undefined : renderText(agent.system, run.templateScope);
  if (node.responseFormat) {
    const instruction = responseFormatInstruction(node.responseFormat);
    system = system ? `${system}\n\n${instruction}` : instruction;
  }
  const data = node.data && (renderValue(node.data, run.templateScope) as Record<string, unknown>);
  const user = buildUserMessage(renderText(node.user, run.templateScope), data);
  const allowedTools = new Set(agent.tools ?? []);
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
  if (allowedTools.size > 0) request.tools = services.tools.definitions([...allowedTools]);
  if (node.responseFormat) request.responseFormat = node.responseFormat;
  if (agent.simulate && model.provider === 'sim') {
    request.simulate = { ...agent.simulate, scriptKey: `${run.workflow.id}:${node.agent}` };
  }

  const maxTurns = node.maxTurns ?? DEFAULTS.maxTurns;
  const timeoutMs = node.timeoutMs ?? DEFAULTS.nodeTimeoutMs;
  const deadline = withDeadline(
    signal,
    timeoutMs,
    () => new AppError('NODE_TIMEOUT', `node "${node.name}" did not finish within ${timeoutMs} ms`),
  );
  const call = { node: node.name, nodeId: record.id, agent: node.agent, attempt };
  try {
    for (let turn = 1; turn <= maxTurns; turn++) {
      const response = await callModel(run, model, request, deadline.signal, {
        ...call,
        turn,
        prompt: turn === 1 ? user : undefined,
      });
      const toolUses = response.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
      if (toolUses.length === 0) {
        const text = responseText(response);
        return node.responseFormat ? validateAnswer(text, node.responseFormat) : text;
      }
      const results: ToolResultBlock[] = [];
      for (const use of toolUses) results.push(await invokeTool(run, use, record, allowedTools));
      const turns: LlmMessage[] = [
        { role: 'assistant', content: response.content },
        { role: 'user', content: results },
      ];
      request.messages = [...request.messages, ...turns];
    }
    throw new AppError(
      'MAX_TURNS_EXCEEDED',
      `node "${node.name}" reached maxTurns (${maxTurns}) without a final answer`,
    );
  } finally {
    deadline.dispose();
  }
}

interface CallInfo {
  node: string;
  nodeId: string;
  agent: string;
  attempt: number;
  turn: number;
  prompt: string | undefined;
}

async function callModel(
  run: Run,
  model: ResolvedModel,
  request: LlmRequest,
  signal: AbortSignal,
  info: CallInfo,
): Promise<LlmResponse> {
  const { services } = run;
  const { clock } = services;
  const call = {
    node: info.node,
    agent: info.agent,
    model: model.id,
    simulated: model.simulated,
    attempt: info.attempt,
    turn: info.turn,
  };
  run.emit('agentPromptStart', info.nodeId, {
    ...call,
    ...(info.prompt === undefined ? {} : { prompt: redactSecrets(info.prompt) }),
  });
  run.flushInBackground();
  const started = clock.now();
  const response = await callWithRetry(
    async () => {
      if (services.isStopping()) throw shuttingDownError();
      if (++run.llmCalls > run.llmCallLimit) {
        throw new AppError(
          'LLM_CALL_LIMIT_EXCEEDED',
          `the workflow reached its limit of ${run.llmCallLimit} model calls`,
        );
      }
      await services.llmSlots.acquire(signal);
      try {
        return await model.client.complete(request, { signal });
      } finally {
        services.llmSlots.release();
      }
    },
    {
      policy: services.retry,
      signal,
      clock,
      onRetry: (notice) => {
        run.emit('retry', info.nodeId, {
          node: info.node,
          reason: notice.reason,
          delayMs: notice.delayMs,
          attempt: notice.attempt,
          code: notice.error.code,
          message: redactSecrets(notice.error.message),
        });
        run.flushInBackground();
      },
    },
  );
  run.emit('agentPromptEnd', info.nodeId, {
    ...call,
    duration: clock.now() - started,
    tokenUsage: response.usage,
    costUsd: services.models.costUsd(model.id, response.usage),
    stopReason: response.stopReason,
  });
  return response;
}

async function invokeTool(
  run: Run,
  use: ToolUseBlock,
  record: NodeRecord,
  allowed: ReadonlySet<string>,
): Promise<ToolResultBlock> {
  const started = run.services.clock.now();
  const result = allowed.has(use.name)
    ? await run.services.tools.run(use.name, use.input, { workflow: run.workflow, node: record, nodes: run.nodesById })
    : {
        content: JSON.stringify({ error: `tool "${use.name}" is not available to this agent` }),
        isError: true,
        output: null,
      };
  run.emit('toolInvocation', record.id, {
    node: record.name,
    toolName: use.name,
    input: redactValue(use.input),
    output: result.output,
    isError: result.isError,
    duration: run.services.clock.now() - started,
  });
  const block: ToolResultBlock = { type: 'tool_result', tool_use_id: use.id, content: result.content };
  if (result.isError) block.is_error = true;
  return block;
}
