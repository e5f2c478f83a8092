import { agentNameOf, DEFAULTS, type PromptNode } from '../../../domain/definition.js';
import { AppError, toErrorInfo } from '../../../domain/errors.js';
import {
  type JsonSchema,
  type LlmMessage,
  responseText,
  type ToolResultBlock,
  type ToolUseBlock,
} from '../../../domain/llm.js';
import type { NodeRecord } from '../../../domain/records.js';
import { redactSecrets, redactValue } from '../../../domain/redact.js';
import { isPromptReflectable, promptReflectionTurn } from '../../../reflection/policy.js';
import type { CommittedTurn, NodeAttempt, NodeContext } from '../../node-context.js';
import { ConversationSize } from './conversation-size.js';
import { nodeDeadlineError, type PreparedPrompt } from './request.js';
import { validateAnswer } from './response-format.js';

/**
 * A prompt's conversation with its agent: one call, or a multi-turn tool loop (`maxTurns` counts tool
 * turns), under the node's deadline (docs/design.md#workflow-definitions, docs/design.md#agent-tools). With
 * prompt-level reflection on, an answer that
 * is not valid JSON or breaks responseFormat is re-asked in the same conversation: the bad assistant
 * turn, then a user turn carrying the error and the attempt — `maxAttempts` answers at most (§5).
 * Each completed turn (tool results, a re-ask) is committed before the next call; a node re-run
 * after a crash starts at its first uncommitted turn (turn-log.ts).
 */
export async function converse(
  ctx: NodeContext,
  node: PromptNode,
  at: NodeAttempt,
  { model, request, user, agent }: PreparedPrompt,
  agentSpan: string,
  /** The node's cache keys so far: conversations of one node (a review's reviewers) share one list. */
  cacheKeys: string[] = [],
  /** Which conversation of the node this is: its committed turns are resumed by this name. */
  conversation: string = PROMPT_CONVERSATION,
): Promise<unknown> {
  const { record, attempt } = at;
  const allowedTools = new Set(agent.tools ?? []);
  const reflect = ctx.reflections.promptLevel(node);
  const maxAnswers = reflect ? ctx.reflections.maxAttempts : 1;
  const maxTurns = node.maxTurns ?? DEFAULTS.maxTurns;
  const timeoutMs = node.timeoutMs ?? DEFAULTS.nodeTimeoutMs;
  const deadline = ctx.deadlines.within(at.signal, timeoutMs, () => nodeDeadlineError(node, timeoutMs));
  const call = {
    node: node.name,
    nodeId: record.id,
    agent: agentNameOf(node),
    attempt,
    cacheable: ctx.view.cacheEnabled(node, agent),
    spanId: agentSpan,
  };
  // After a crash, the turns a dead execution committed are the conversation so far: the provider
  // is asked from the first uncommitted turn on.
  let firstTurn = 1;
  const size = new ConversationSize(node.name, ctx.view.limits.maxConversationBytes);
  let toolTurns = 0;
  let answers = 0;
  let reflection: string | undefined;
  const resumed = await ctx.turns.resumed(record, conversation);
  if (resumed.length > 0) {
    for (const done of resumed) {
      if (done.kind === 'tool') toolTurns++;
      if (done.kind === 'reask') {
        answers++;
        reflection = done.reflectionId;
      }
      firstTurn = done.turn + 1;
    }
    const messages = resumed.flatMap((done) => done.messages);
    size.grow(request, messages);
    request.messages = [...request.messages, ...messages];
  }
  const commitTurn = (turn: number, kind: CommittedTurn['kind'], messages: LlmMessage[], reflectionId?: string) => {
    size.grow(request, messages);
    request.messages = [...request.messages, ...messages];
    // Durable before the next call, through the group commit like a node result.
    return ctx.turns.commit(record, attempt, conversation, { turn, kind, messages, reflectionId });
  };
  try {
    for (let turn = firstTurn; ; turn++) {
      const answer = await ctx.models.call(model, request, deadline.signal, {
        ...call,
        turn,
        prompt: turn === 1 ? user : undefined,
      });
      const { response } = answer;
      if (answer.cacheKey !== undefined) {
        cacheKeys.push(answer.cacheKey);
        ctx.journal.patchNode(record, { cacheKeys: [...cacheKeys] });
      }
      const toolUses = response.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
      if (toolUses.length > 0) {
        if (++toolTurns >= maxTurns) {
          throw new AppError(
            'MAX_TURNS_EXCEEDED',
            `node "${node.name}" reached maxTurns (${maxTurns}) without a final answer`,
          );
        }
        ctx.models.remember(model, answer);
        const results: ToolResultBlock[] = [];
        const site = {
          record,
          allowed: allowedTools,
          parentSpan: agentSpan,
          agent: agentNameOf(node),
          model: model.id,
        };
        for (const [call, use] of toolUses.entries()) {
          const slot = { conversation, turn, call };
          results.push(toolResultBlock(await ctx.tools.invoke(use, { ...site, slot })));
        }
        await commitTurn(turn, 'tool', toolTurn(response.content, results));
        continue;
      }
      const text = responseText(response);
      checkOutputSize(ctx, node, text);
      if (!node.responseFormat) {
        ctx.models.remember(model, answer);
        // What a node keeps is redacted like everything else baton stores (docs/design.md#security).
        return redactSecrets(text);
      }
      answers++;
      try {
        const value = checkResponseFormat(ctx, record, text, node.responseFormat, agentSpan);
        // Only an answer that passed validation is worth serving again (docs/design.md#caching).
        ctx.models.remember(model, answer);
        if (reflection) ctx.reflections.settle(reflection, true);
        return redactValue(value);
      } catch (err) {
        if (reflection) ctx.reflections.settle(reflection, false);
        if (!isPromptReflectable(err) || answers >= maxAnswers) throw err;
        reflection = reAsk(ctx, node, record, err, { answers, maxAnswers, nodeAttempt: attempt }, agentSpan);
        const reasked: LlmMessage[] = [
          { role: 'assistant', content: response.content },
          { role: 'user', content: promptReflectionTurn(toErrorInfo(err), answers) },
        ];
        await commitTurn(turn, 'reask', reasked, reflection);
      }
    }
  } finally {
    deadline.dispose();
  }
}

/** The conversation of a prompt node (a review's reviewers each have their own). */
export const PROMPT_CONVERSATION = 'prompt';

/**
 * The records of one prompt-level re-ask. In a prompt-level reflection an attempt is an answer:
 * `attempt` is the answer that failed, the same number the re-ask turn tells the model, and
 * `nodeAttempt` is the node's own attempt. Returns the reflection entry, settled by the next answer.
 */
export function reAsk(
  ctx: NodeContext,
  node: PromptNode,
  record: NodeRecord,
  err: unknown,
  counts: { answers: number; maxAnswers: number; nodeAttempt: number },
  agentSpan: string,
): string {
  const error = toErrorInfo(err);
  const failed = { attempt: counts.answers, nodeAttempt: counts.nodeAttempt };
  ctx.journal.emit(record.id, { type: 'invalidResponse', payload: { node: node.name, ...failed, ...error } });
  ctx.journal.emit(record.id, { type: 'reflectionStart', payload: { level: 'prompt', node: node.name, ...failed } });
  ctx.journal.recordSpan({
    type: 'custom_span',
    parentId: agentSpan,
    nodeId: record.id,
    fields: {
      operation_name: 'reflection',
      metadata: { level: 'prompt', decision: 'retry', answer: counts.answers, error: error.code },
    },
  });
  return ctx.reflections.record({
    node: record,
    ...failed,
    level: 'prompt',
    reason: `answer ${counts.answers} of ${counts.maxAnswers} broke the response format; re-asked in the same conversation`,
    error,
    resolution: { decision: 'retry' },
    decisionSuccess: true,
  });
}

/** A node's stored output is bounded (docs/design.md#security): a bigger answer fails the node with a clear code. */
export function checkOutputSize(ctx: NodeContext, node: PromptNode, text: string): void {
  const limit = ctx.view.limits.maxNodeOutputBytes;
  // Three bytes per UTF-16 unit at most: a short text is under the limit without counting.
  if (text.length * 3 <= limit) return;
  const bytes = Buffer.byteLength(text);
  if (bytes <= limit) return;
  throw new AppError(
    'OUTPUT_TOO_LARGE',
    `node "${node.name}" answered ${bytes} bytes; one node may store at most ${limit} (MAX_NODE_OUTPUT_BYTES)`,
  );
}

/**
 * The `response_format` guardrail (docs/design.md#events-spans-metrics-and-rewards): a span per check, triggered when
 * the answer fails it.
 */
export function checkResponseFormat(
  ctx: NodeContext,
  record: NodeRecord,
  text: string,
  schema: JsonSchema,
  parentSpan: string,
): unknown {
  const startedAt = ctx.clock.now();
  const guardrail = (triggered: boolean) =>
    ctx.journal.recordSpan({
      type: 'guardrail_span',
      parentId: parentSpan,
      nodeId: record.id,
      fields: { guardrail_name: 'response_format', triggered, blocking: true },
      startedAt,
    });
  try {
    const value = validateAnswer(text, schema);
    guardrail(false);
    return value;
  } catch (err) {
    guardrail(true);
    throw err;
  }
}

export function toolTurn(assistant: LlmMessage['content'], results: ToolResultBlock[]): LlmMessage[] {
  return [
    { role: 'assistant', content: assistant },
    { role: 'user', content: results },
  ];
}

/** The block the provider gets back: the tool's output travels as content only. */
export function toolResultBlock({ output: _, ...block }: ToolResultBlock & { output: unknown }): ToolResultBlock {
  return block;
}
