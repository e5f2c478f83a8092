import { agentNameOf, DEFAULTS, type PromptNode } from '../../../domain/definition.js';
import { AppError, toErrorInfo } from '../../../domain/errors.js';
import {
  type JsonSchema,
  type LlmMessage,
  responseText,
  type ToolResultBlock,
  type ToolUseBlock,
} from '../../../domain/llm.js';
import { redactSecrets, redactValue } from '../../../domain/redact.js';
import type { Retrieval } from '../../../domain/retrieval.js';
import type { GuardKind, HaltReason, RetrievalMode } from '../../../domain/tool-analytics.js';
import { autoGuard } from '../../../metrics/engagement.js';
import { retrievalRelevant } from '../../../metrics/retrieval-relevance.js';
import { isPromptReflectable, promptReflectionTurn } from '../../../reflection/policy.js';
import {
  correctiveTurn,
  forcedAnswerTurn,
  guardTurn,
  retrievalInstructions,
  retrievalResultsTurn,
  scanAction,
} from '../../../tools/action-contract.js';
import type { RetrievedChunk } from '../../../tools/tool.js';
import { isCancellation, isShutdown } from '../../errors.js';
import type { CommittedTurn, NodeAttempt, NodeContext, ToolCallSite } from '../../node-context.js';
import {
  checkOutputSize,
  checkResponseFormat,
  PROMPT_CONVERSATION,
  reAsk,
  toolResultBlock,
  toolTurn,
} from './conversation.js';
import { ConversationSize } from './conversation-size.js';
import { nodeDeadlineError, type PreparedPrompt } from './request.js';

/**
 * A prompt with `retrieval` (docs/design.md#agent-tools): retrieve-then-finalize over one of the tenant's corpora,
 * in `tools` mode (the `retrieve` tool, native tool calling; a plain-text answer finalizes) or
 * `json-actions` mode (the waggle-os contract for models without tools). At most `maxSteps` model
 * turns, then one forced plain-prose answer; one corrective turn for a malformed action; the
 * engagement guard refuses one early finalize. Every run leaves its engagement record: a
 * retrieval_runs row and a retrievalEnd event. Each completed turn is committed before the next
 * call, with the loop's counters; a node re-run after a crash resumes at its first uncommitted turn.
 */
export function runRetrievalLoop(
  ctx: NodeContext,
  node: PromptNode & { retrieval: Retrieval },
  at: NodeAttempt,
  prepared: PreparedPrompt,
  agentSpan: string,
): Promise<unknown> {
  const { retrieval } = node;
  const settings = {
    corpus: retrieval.corpus,
    mode: retrieval.mode ?? DEFAULTS.retrieval.mode,
    max_steps: retrieval.maxSteps ?? DEFAULTS.retrieval.maxSteps,
    max_chunks: retrieval.maxChunks ?? DEFAULTS.retrieval.maxChunks,
  };
  // The loop's own span under the agent span: its generations, retrieve calls and checks nest in it,
  // and it ends with the engagement counts.
  const counts: Record<string, unknown> = {};
  const fields = () => ({ operation_name: 'retrieval_loop', metadata: { ...settings, ...counts } });
  return ctx.journal.withSpan(
    { type: 'custom_span', parentId: agentSpan, nodeId: at.record.id, fields: fields() },
    (loopSpan) => retrievalLoop(ctx, node, at, prepared, loopSpan, counts),
    () => ({ fields: fields() }),
  );
}

async function retrievalLoop(
  ctx: NodeContext,
  node: PromptNode & { retrieval: Retrieval },
  at: NodeAttempt,
  prepared: PreparedPrompt,
  agentSpan: string,
  /** Filled with the engagement counts when the run ends, for the loop's span. */
  spanCounts: Record<string, unknown>,
): Promise<unknown> {
  const { retrieval } = node;
  const { model, request, user, agent } = prepared;
  const { record } = at;
  const mode: RetrievalMode = retrieval.mode ?? DEFAULTS.retrieval.mode;
  const maxSteps = retrieval.maxSteps ?? DEFAULTS.retrieval.maxSteps;
  const maxChunks = retrieval.maxChunks ?? DEFAULTS.retrieval.maxChunks;
  const timeoutMs = node.timeoutMs ?? DEFAULTS.nodeTimeoutMs;
  const taskType = ctx.view.definition.task?.type ?? 'unspecified';
  const state = {
    retrievals: 0,
    steps: 0,
    loopExhausted: false,
    corrected: false,
    interventions: 0,
    chunks: [] as string[],
  };
  let guard: { kind: GuardKind; minCalls: number | null } = { kind: 'none', minCalls: null };
  const recordEngagement = (haltReason: HaltReason, answer: string | null) => {
    const relevant = answer === null ? null : retrievalRelevant(state.chunks, answer);
    const counts = {
      retrievalCalls: state.retrievals,
      steps: state.steps,
      loopExhausted: state.loopExhausted,
      haltReason,
    };
    Object.assign(spanCounts, {
      retrieval_calls: counts.retrievalCalls,
      steps: counts.steps,
      loop_exhausted: counts.loopExhausted,
      halt_reason: haltReason,
      guard_interventions: state.interventions,
      relevant,
    });
    ctx.journal.emit(record.id, {
      type: 'retrievalEnd',
      payload: { node: node.name, agent: agentNameOf(node), model: model.id, mode, ...counts, relevant },
    });
    ctx.journal.addRetrievalRun({
      tenantId: ctx.view.workflow.tenantId,
      workflowId: ctx.view.workflow.id,
      nodeId: record.id,
      nodeName: node.name,
      taskType,
      agent: agentNameOf(node),
      model: model.id,
      corpusId,
      mode,
      ...counts,
      guard: guard.kind,
      guardMinCalls: guard.minCalls,
      guardInterventions: state.interventions,
      relevant,
      at: ctx.clock.now(),
    });
  };

  const corpus = await ctx.retrieval.corpus(retrieval.corpus);
  if (!corpus) throw new AppError('MISSING_CONTEXT', `node "${node.name}": you have no corpus "${retrieval.corpus}"`);
  const corpusId = corpus.id;
  guard = await decideGuard(ctx, retrieval, model.id, taskType, maxSteps);

  const instructions = retrievalInstructions(mode, maxSteps, maxChunks, node.responseFormat);
  request.system = request.system ? `${request.system}\n\n${instructions}` : instructions;
  if (mode === 'tools') request.tools = ctx.tools.definitions([...new Set([...(agent.tools ?? []), 'retrieve'])]);
  else delete request.tools;
  const site: Omit<ToolCallSite, 'slot'> = {
    record,
    allowed: new Set(mode === 'tools' ? [...(agent.tools ?? []), 'retrieve'] : ['retrieve']),
    parentSpan: agentSpan,
    agent: agentNameOf(node),
    model: model.id,
    retrieve: async (query): Promise<RetrievedChunk[]> => {
      const hits = await ctx.retrieval.search(corpusId, query, maxChunks);
      for (const hit of hits) state.chunks.push(hit.text);
      return hits;
    },
  };
  const size = new ConversationSize(node.name, ctx.view.limits.maxConversationBytes);
  const append = (...messages: LlmMessage[]) => {
    size.grow(request, messages);
    request.messages = [...request.messages, ...messages];
  };
  /** A user turn, or more text in the last one when the conversation already ends with a user turn. */
  const appendUserText = (text: string) => {
    const last = request.messages.at(-1);
    if (last?.role !== 'user') return append({ role: 'user', content: text });
    size.grow(request, [{ role: 'user', content: text }]);
    const content = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
    request.messages = [
      ...request.messages.slice(0, -1),
      { role: 'user', content: [...content, { type: 'text', text }] },
    ];
  };
  const slot = (call: number) => ({ ...site, slot: { conversation: PROMPT_CONVERSATION, turn: state.steps, call } });
  // After a crash, the turns a dead execution committed are the conversation so far, and their
  // counters the state: the provider is asked from the first uncommitted turn on.
  for (const done of await ctx.turns.resumed(record, PROMPT_CONVERSATION)) {
    const { chunks = [], ...counters } = (done.state ?? {}) as Partial<typeof state>;
    Object.assign(state, counters, { steps: done.turn });
    state.chunks.push(...chunks);
    append(...done.messages);
  }
  let committed = { messages: request.messages.length, chunks: state.chunks.length };
  /** The turn just completed, durable before the next call (its new messages, the counters, new chunks). */
  const commitTurn = (kind: CommittedTurn['kind'], reflectionId?: string) => {
    const messages = request.messages.slice(committed.messages);
    const { retrievals, corrected, interventions } = state;
    const chunks = state.chunks.slice(committed.chunks);
    committed = { messages: request.messages.length, chunks: state.chunks.length };
    return ctx.turns.commit(record, at.attempt, PROMPT_CONVERSATION, {
      turn: state.steps,
      kind,
      messages,
      state: { retrievals, corrected, interventions, chunks },
      ...(reflectionId === undefined ? {} : { reflectionId }),
    });
  };
  const deadline = ctx.deadlines.within(at.signal, timeoutMs, () => nodeDeadlineError(node, timeoutMs));
  const cacheKeys: string[] = [];
  const call = async (forced: boolean) => {
    state.steps++;
    const answer = await ctx.models.call(model, request, deadline.signal, {
      node: node.name,
      nodeId: record.id,
      agent: agentNameOf(node),
      attempt: at.attempt,
      turn: state.steps,
      prompt: state.steps === 1 ? user : undefined,
      ...(forced ? { purpose: 'forced_answer' } : {}),
      cacheable: ctx.view.cacheEnabled(node, agent),
      spanId: agentSpan,
    });
    if (answer.cacheKey !== undefined) {
      cacheKeys.push(answer.cacheKey);
      ctx.journal.patchNode(record, { cacheKeys: [...cacheKeys] });
    }
    ctx.models.remember(model, answer);
    return answer.response;
  };

  /** A finalize: accepted, or refused once by the guard while turns remain. */
  const accepts = (assistant: LlmMessage['content']): boolean => {
    const turnsLeft = maxSteps - state.steps;
    const { minCalls } = guard;
    if (minCalls === null || state.interventions > 0 || state.retrievals >= minCalls || turnsLeft < 1) return true;
    state.interventions++;
    ctx.journal.emit(record.id, {
      type: 'guardIntervention',
      payload: {
        node: node.name,
        agent: agentNameOf(node),
        model: model.id,
        retrievals: state.retrievals,
        minCalls,
        turnsLeft,
        auto: guard.kind === 'auto',
      },
    });
    // A tool result must answer a tool call; a finalize is plain text in tools mode, so the
    // refusal is a user turn there too, in the same words.
    append(
      { role: 'assistant', content: assistant },
      { role: 'user', content: guardTurn(state.retrievals, minCalls, turnsLeft) },
    );
    return false;
  };

  /** The final answer's text from a model answer: a finalize action's response, else the text. */
  const answerOf = (text: string): string => {
    if (mode !== 'json-actions') return text;
    const scanned = scanAction(text);
    return scanned.ok && scanned.action.action === 'finalize' ? scanned.action.response : text;
  };
  /**
   * Under responseFormat the final answer is validated (a response_format guardrail span); one that
   * breaks it is re-asked in the same conversation as a prompt-level reflection, like any prompt.
   */
  const formatted = async (schema: JsonSchema, first: { text: string; assistant: LlmMessage['content'] }) => {
    const maxAnswers = ctx.reflections.promptLevel(node) ? ctx.reflections.maxAttempts : 1;
    let answer = first;
    let reflection: string | undefined;
    for (let answers = 1; ; answers++) {
      try {
        checkOutputSize(ctx, node, answer.text);
        const value = checkResponseFormat(ctx, record, answer.text, schema, agentSpan);
        if (reflection) ctx.reflections.settle(reflection, true);
        return { text: answer.text, value: redactValue(value) };
      } catch (err) {
        if (reflection) ctx.reflections.settle(reflection, false);
        if (!isPromptReflectable(err) || answers >= maxAnswers) throw err;
        reflection = reAsk(ctx, node, record, err, { answers, maxAnswers, nodeAttempt: at.attempt }, agentSpan);
        append(
          { role: 'assistant', content: answer.assistant },
          { role: 'user', content: promptReflectionTurn(toErrorInfo(err), answers) },
        );
        await commitTurn('reask', reflection);
        const text = responseText(await call(false));
        answer = { text: answerOf(text), assistant: text };
      }
    }
  };

  try {
    let final: string | undefined;
    /** What the model said when it gave the final answer (re-asked with it under responseFormat). */
    let finalTurn: LlmMessage['content'] = '';
    while (final === undefined && state.steps < maxSteps) {
      const response = await call(false);
      const text = responseText(response);
      if (mode === 'tools') {
        const uses = response.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
        if (uses.length > 0) {
          const results: ToolResultBlock[] = [];
          for (const [call, use] of uses.entries()) {
            if (use.name === 'retrieve') state.retrievals++;
            results.push(toolResultBlock(await ctx.tools.invoke(use, slot(call))));
          }
          append(...toolTurn(response.content, results));
          await commitTurn('tool');
          continue;
        }
        if (accepts(response.content)) {
          final = text;
          finalTurn = response.content;
        } else await commitTurn('guard');
        continue;
      }
      const scanned = scanAction(text);
      if (!scanned.ok) {
        if (state.corrected) {
          throw new AppError(
            'INVALID_ACTION',
            `node "${node.name}": a second malformed action after the corrective turn (${scanned.problem})`,
          );
        }
        state.corrected = true;
        append({ role: 'assistant', content: text }, { role: 'user', content: correctiveTurn(scanned.problem) });
        await commitTurn('corrective');
        continue;
      }
      const { action } = scanned;
      if (action.action === 'finalize') {
        if (accepts(text)) {
          final = action.response;
          finalTurn = text;
        } else await commitTurn('guard');
        continue;
      }
      state.retrievals++;
      const use: ToolUseBlock = {
        type: 'tool_use',
        id: `action_${state.steps}`,
        name: 'retrieve',
        input: { query: action.query },
      };
      const result = await ctx.tools.invoke(use, slot(0));
      const chunks = result.is_error ? undefined : (result.output as { chunks?: RetrievedChunk[] }).chunks;
      // A result cut at MAX_TOOL_RESULT_BYTES has no chunk list: the model reads its cut JSON instead.
      const turn = result.is_error
        ? `The retrieval failed: ${result.content}`
        : Array.isArray(chunks)
          ? retrievalResultsTurn(action.query, chunks)
          : result.content;
      append({ role: 'assistant', content: text }, { role: 'user', content: turn });
      await commitTurn('action');
    }
    let halt: HaltReason = 'finalized';
    if (final === undefined) {
      state.loopExhausted = true;
      halt = 'budget_exhausted';
      // After results or a correction, the demand for an answer joins that user turn (roles alternate).
      appendUserText(forcedAnswerTurn(maxSteps));
      const forced = responseText(await call(true));
      const scanned = mode === 'json-actions' ? scanAction(forced) : undefined;
      // Asked for its answer, the model retrieved again: the budget is spent and there is no answer
      // (its action JSON is not one), so the node fails as for an empty forced answer.
      const action = scanned?.ok ? scanned.action : undefined;
      if (action !== undefined && action.action !== 'finalize') {
        throw new AppError(
          'MAX_TURNS_EXCEEDED',
          `node "${node.name}" used its ${maxSteps} turns and answered the demand for a final answer with another retrieve action`,
        );
      }
      final = action === undefined ? forced : action.response;
      finalTurn = forced;
      if (final.trim() === '') {
        throw new AppError(
          'MAX_TURNS_EXCEEDED',
          `node "${node.name}" used its ${maxSteps} turns and gave no final answer`,
        );
      }
    }
    if (node.responseFormat) {
      const { text, value } = await formatted(node.responseFormat, { text: final, assistant: finalTurn });
      recordEngagement(halt, redactSecrets(text));
      return value;
    }
    checkOutputSize(ctx, node, final);
    // What a node keeps is redacted like everything else baton stores (docs/design.md#security).
    const output = redactSecrets(final);
    recordEngagement(halt, output);
    return output;
  } catch (err) {
    // An interrupted run resumes and ends later: only a run that really ended is engagement data.
    if (!isShutdown(err) && !isCancellation(err)) recordEngagement('error', null);
    throw err;
  } finally {
    deadline.dispose();
  }
}

async function decideGuard(
  ctx: NodeContext,
  retrieval: Retrieval,
  modelId: string,
  taskType: string,
  maxSteps: number,
): Promise<{ kind: GuardKind; minCalls: number | null }> {
  const guard = retrieval.guard;
  if (!guard) return { kind: 'none', minCalls: null };
  const fits = (n: number) => Math.min(n, maxSteps - 1);
  if ('minCalls' in guard) return { kind: 'min_calls', minCalls: fits(guard.minCalls) };
  const reference = guard.reference === undefined ? undefined : ctx.models.resolve(guard.reference).id;
  const decision = autoGuard(await ctx.retrieval.engagement({ taskType }), modelId, reference);
  const minCalls = decision === null ? 0 : fits(decision.minCalls);
  return { kind: 'auto', minCalls: minCalls >= 1 ? minCalls : null };
}
