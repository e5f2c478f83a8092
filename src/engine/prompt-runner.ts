import { createHash } from 'node:crypto';
import { DEFAULTS, type PromptNode } from '../domain/definition.js';
import { AppError, toErrorInfo } from '../domain/errors.js';
import {
  type JsonSchema,
  type LlmMessage,
  responseText,
  type ToolResultBlock,
  type ToolUseBlock,
} from '../domain/llm.js';
import type { NodeRecord } from '../domain/records.js';
import { redactSecrets, redactValue } from '../domain/redact.js';
import { isPromptReflectable, promptReflectionTurn } from '../reflection/policy.js';
import { withDeadline } from './deadline.js';
import { callModel, invokeTool, rememberAnswer } from './model-call.js';
import { nodeDeadlineError, type PreparedPrompt, type PromptInputs, preparePrompt } from './prompt-request.js';
import { validateAnswer } from './response-format.js';
import type { Run } from './run.js';
import { isShutdown } from './services.js';

/**
 * A prompt node: one agent call, or a multi-turn tool loop (`maxTurns` counts tool turns), under the
 * node's deadline (DESIGN §3, §10). With prompt-level reflection on, an answer that is not valid JSON
 * or breaks responseFormat is re-asked in the same conversation: the bad assistant turn, then a user
 * turn carrying the error and the attempt — `maxAttempts` answers at most (DESIGN §5).
 */
export async function runPromptNode(
  run: Run,
  node: PromptNode,
  record: NodeRecord,
  signal: AbortSignal,
  attempt: number,
  revised: PromptInputs | undefined,
  parentSpan: string,
): Promise<unknown> {
  const prepared = preparePrompt(run, node, revised);
  const { model, request } = prepared;
  // DESIGN §9: each prompt node is a handoff from the orchestrator, then the agent's own span.
  run.spans.record('handoff_span', parentSpan, record.id, {
    from_agent: 'orchestrator',
    to_agent: node.agent,
    context_passed: { node: node.name, attempt },
  });
  const agentSpan = run.spans.start('agent_span', parentSpan, record.id, {
    agent_name: node.agent,
    model: model.id,
    instructions_hash: request.system === undefined ? null : instructionsHash(request.system),
  });
  try {
    const output = await converse(run, node, record, signal, attempt, prepared, agentSpan);
    run.spans.end(agentSpan, 'ok');
    return output;
  } catch (err) {
    run.spans.end(agentSpan, isShutdown(err) ? 'interrupted' : 'error', undefined, toErrorInfo(err));
    throw err;
  }
}

async function converse(
  run: Run,
  node: PromptNode,
  record: NodeRecord,
  signal: AbortSignal,
  attempt: number,
  { model, request, user, agent }: PreparedPrompt,
  agentSpan: string,
): Promise<unknown> {
  const allowedTools = new Set(agent.tools ?? []);
  const reflect = run.reflections.promptLevel(node);
  const maxAnswers = reflect ? run.reflections.maxAttempts : 1;
  const maxTurns = node.maxTurns ?? DEFAULTS.maxTurns;
  const timeoutMs = node.timeoutMs ?? DEFAULTS.nodeTimeoutMs;
  const deadline = withDeadline(signal, timeoutMs, () => nodeDeadlineError(node, timeoutMs), run.services.clock.now());
  const call = {
    node: node.name,
    nodeId: record.id,
    agent: node.agent,
    attempt,
    cacheable: run.cacheEnabled(node, agent),
    spanId: agentSpan,
  };
  const cacheKeys: string[] = [];
  let toolTurns = 0;
  let answers = 0;
  let reflection: string | undefined;
  try {
    for (let turn = 1; ; turn++) {
      const answer = await callModel(run, model, request, deadline.signal, {
        ...call,
        turn,
        prompt: turn === 1 ? user : undefined,
      });
      const { response } = answer;
      if (answer.cacheKey !== undefined) {
        cacheKeys.push(answer.cacheKey);
        run.patchNode(record, { cacheKeys: [...cacheKeys] });
      }
      const toolUses = response.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
      if (toolUses.length > 0) {
        if (++toolTurns >= maxTurns) {
          throw new AppError(
            'MAX_TURNS_EXCEEDED',
            `node "${node.name}" reached maxTurns (${maxTurns}) without a final answer`,
          );
        }
        rememberAnswer(run, model, answer);
        const results: ToolResultBlock[] = [];
        for (const use of toolUses) results.push(await invokeTool(run, use, record, allowedTools, agentSpan));
        request.messages = [...request.messages, ...toolTurn(response.content, results)];
        continue;
      }
      const text = responseText(response);
      checkOutputSize(run, node, text);
      if (!node.responseFormat) {
        rememberAnswer(run, model, answer);
        // What a node keeps is redacted like everything else baton stores (DESIGN §13).
        return redactSecrets(text);
      }
      answers++;
      try {
        const value = checkResponseFormat(run, record, text, node.responseFormat, agentSpan);
        // Only an answer that passed validation is worth serving again (DESIGN §6).
        rememberAnswer(run, model, answer);
        if (reflection) run.reflections.settle(reflection, true);
        return redactValue(value);
      } catch (err) {
        if (reflection) run.reflections.settle(reflection, false);
        if (!isPromptReflectable(err) || answers >= maxAnswers) throw err;
        const error = toErrorInfo(err);
        // In a prompt-level reflection an attempt is an answer: `attempt` is the answer that failed, the
        // same number the re-ask turn tells the model; `nodeAttempt` is the node's own attempt.
        const failed = { attempt: answers, nodeAttempt: attempt };
        run.emit('invalidResponse', record.id, { node: node.name, ...failed, ...error });
        run.emit('reflectionStart', record.id, { level: 'prompt', node: node.name, ...failed });
        run.spans.record('custom_span', agentSpan, record.id, {
          operation_name: 'reflection',
          metadata: { level: 'prompt', decision: 'retry', answer: answers, error: error.code },
        });
        reflection = run.reflections.record({
          node: record,
          attempt: answers,
          nodeAttempt: attempt,
          level: 'prompt',
          reason: `answer ${answers} of ${maxAnswers} broke the response format; re-asked in the same conversation`,
          error,
          resolution: { decision: 'retry' },
          decisionSuccess: true,
        });
        request.messages = [
          ...request.messages,
          { role: 'assistant', content: response.content },
          { role: 'user', content: promptReflectionTurn(error, answers) },
        ];
      }
    }
  } finally {
    deadline.dispose();
  }
}

/** A node's stored output is bounded (DESIGN §13): a bigger answer fails the node with a clear code. */
function checkOutputSize(run: Run, node: PromptNode, text: string): void {
  const limit = run.services.maxNodeOutputBytes;
  // Three bytes per UTF-16 unit at most: a short text is under the limit without counting.
  if (text.length * 3 <= limit) return;
  const bytes = Buffer.byteLength(text);
  if (bytes <= limit) return;
  throw new AppError(
    'OUTPUT_TOO_LARGE',
    `node "${node.name}" answered ${bytes} bytes; one node may store at most ${limit} (MAX_NODE_OUTPUT_BYTES)`,
  );
}

/** The `response_format` guardrail (DESIGN §9): a span per check, triggered when the answer fails it. */
function checkResponseFormat(
  run: Run,
  record: NodeRecord,
  text: string,
  schema: JsonSchema,
  parentSpan: string,
): unknown {
  const started = run.services.clock.now();
  try {
    const value = validateAnswer(text, schema);
    run.spans.record('guardrail_span', parentSpan, record.id, guardrail(false), 'ok', started);
    return value;
  } catch (err) {
    run.spans.record('guardrail_span', parentSpan, record.id, guardrail(true), 'ok', started);
    throw err;
  }
}

function guardrail(triggered: boolean) {
  return { guardrail_name: 'response_format', triggered, blocking: true };
}

/** Identifies the instructions an agent ran with without storing them in every span. */
function instructionsHash(system: string): string {
  return createHash('sha256').update(system).digest('hex').slice(0, 16);
}

function toolTurn(assistant: LlmMessage['content'], results: ToolResultBlock[]): LlmMessage[] {
  return [
    { role: 'assistant', content: assistant },
    { role: 'user', content: results },
  ];
}
