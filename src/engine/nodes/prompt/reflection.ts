import { agentNameOf, DEFAULTS, type PromptNode } from '../../../domain/definition.js';
import { type ErrorInfo, toErrorInfo } from '../../../domain/errors.js';
import { responseText } from '../../../domain/llm.js';
import type { ReflectionAdvice } from '../../../domain/reflection.js';
import {
  applyRevisions,
  decide,
  isPromptReflectable,
  isReflectable,
  parseReflectionAdvice,
  reflectionRequestMessage,
  reflectionResponseFormat,
  resolutionOf,
} from '../../../reflection/policy.js';
import { isCancellation, isShutdown } from '../../errors.js';
import type { NodeAttempt, NodeContext } from '../../node-context.js';
import { nodeDeadlineError, preparePrompt } from './request.js';

/**
 * Workflow-level reflection (docs/design.md#reflection-and-retries): a prompt node failed with a reflectable error,
 * so its own
 * agent is asked whether and how to retry. The answer's revisions are applied to the next attempt;
 * when the reflection call itself fails, the fallback retries while attempts remain. Returns whether
 * the node runs again.
 */
export async function reflectOnFailure(
  ctx: NodeContext,
  node: PromptNode,
  at: NodeAttempt,
  failure: unknown,
): Promise<boolean> {
  const { reflections } = ctx;
  if (!reflections.workflowLevel || !isReflectable(failure)) return false;
  // Format failures were already re-asked in the conversation by prompt-level reflection.
  if (isPromptReflectable(failure) && reflections.promptLevel(node)) return false;
  const { record, attempt } = at;
  const maxAttempts = reflections.maxAttempts;
  if (attempt >= maxAttempts) return false;

  const error = toErrorInfo(failure);
  ctx.journal.emit(record.id, { type: 'reflectionStart', payload: { level: 'workflow', node: node.name, attempt } });
  const span = reflectionSpan(node, at, error);
  const { advice, decided } = await ctx.journal.withSpan(
    span,
    async (spanId) => {
      const advice = await askForAdvice(ctx, node, at, error, maxAttempts, spanId);
      return { advice, decided: decide({ advice, attempt, maxAttempts, optional: node.optional === true }) };
    },
    ({ decided }) => ({ fields: { metadata: { ...span.fields.metadata, decision: decided.decision } } }),
  );
  const applied = decided.decision === 'retry' ? applyRevisions(reflections.inputs(node, record), advice) : undefined;
  if (applied) reflections.revise(record.id, { data: applied.data, system: applied.system });
  reflections.record({
    node: record,
    attempt,
    level: 'workflow',
    reason: decided.reason,
    error,
    resolution: resolutionOf(decided.decision, applied),
    decisionSuccess: decided.success,
  });
  return decided.decision === 'retry';
}

/**
 * A reflection a person asked for (docs/workflows.md#reflection): the node's last attempt failed and the run
 * was reopened for it. Like the automatic one, but it always leads to one more attempt: the advice
 * only revises what that attempt is given, and the person's note is passed to the agent. Its call
 * is paid from the same budgets (maxLlmCalls, the tenant's daily spend) and cached under the same rules.
 */
export async function reflectOnRequest(
  ctx: NodeContext,
  node: PromptNode,
  at: NodeAttempt,
  note: string | null,
): Promise<void> {
  const { reflections } = ctx;
  const { record, attempt } = at;
  const error: ErrorInfo = record.error ?? { code: 'INTERNAL', message: 'the failure was not recorded' };
  ctx.journal.emit(record.id, {
    type: 'reflectionStart',
    payload: { level: 'workflow', node: node.name, attempt, requested: true },
  });
  const span = reflectionSpan(node, at, error, { requested: true });
  const advice = await ctx.journal.withSpan(span, (spanId) =>
    askForAdvice(ctx, node, at, error, reflections.maxAttempts, spanId, { note }),
  );
  const applied = applyRevisions(reflections.inputs(node, record), advice);
  reflections.revise(record.id, { data: applied.data, system: applied.system });
  const asked = note ? `retry asked for by hand ("${note}")` : 'retry asked for by hand';
  reflections.record({
    node: record,
    attempt,
    level: 'workflow',
    reason: advice ? `${asked}: ${advice.reason}` : `${asked}; the reflection produced no usable advice`,
    error,
    resolution: resolutionOf('retry', applied),
    decisionSuccess: advice !== undefined,
  });
}

async function askForAdvice(
  ctx: NodeContext,
  node: PromptNode,
  at: NodeAttempt,
  error: ErrorInfo,
  maxAttempts: number,
  spanId: string,
  requested?: { note: string | null },
): Promise<ReflectionAdvice | undefined> {
  const inputs = ctx.reflections.inputs(node, at.record);
  const { model, request, user, agent } = preparePrompt(ctx.view, ctx, node, inputs);
  const reflectionRequest = {
    ...request,
    messages: [
      {
        role: 'user' as const,
        content: reflectionRequestMessage({
          nodeName: node.name,
          userMessage: user,
          system: inputs.system,
          error,
          attempt: at.attempt,
          maxAttempts,
          requested,
        }),
      },
    ],
    responseFormat: reflectionResponseFormat,
  };
  delete reflectionRequest.tools;
  // A sim agent's script belongs to its prompt; the reflection gets the simulator's default answer.
  delete reflectionRequest.simulate;
  delete reflectionRequest.stop;
  if (inputs.system === undefined) delete reflectionRequest.system;
  else reflectionRequest.system = inputs.system;
  const timeoutMs = node.timeoutMs ?? DEFAULTS.nodeTimeoutMs;
  const deadline = ctx.deadlines.within(at.signal, timeoutMs, () => nodeDeadlineError(node, timeoutMs));
  try {
    const answer = await ctx.models.call(model, reflectionRequest, deadline.signal, {
      node: node.name,
      nodeId: at.record.id,
      agent: agentNameOf(node),
      attempt: at.attempt,
      turn: 1,
      purpose: 'reflection',
      // The same key rules and switches as the prompt's own calls (docs/workflows.md#caching). The key covers the
      // failed attempt's number, its error and the inputs it ran with, so a later attempt (or a
      // revised input) asks a different question: a cached answer cannot repeat itself past the
      // attempt budget. Only usable advice is stored.
      cacheable: ctx.view.cacheEnabled(node, agent),
      spanId,
    });
    const advice = parseReflectionAdvice(responseText(answer.response));
    if (advice !== undefined) ctx.models.remember(model, answer);
    return advice;
  } catch (err) {
    // Cancellation and shutdown end the run; any other failure of the reflection call falls back.
    if (isShutdown(err) || isCancellation(err) || at.signal.aborted) throw err;
    return undefined;
  } finally {
    deadline.dispose();
  }
}

/** The custom span a workflow-level reflection runs under; `extra` marks one asked for by hand. */
function reflectionSpan(node: PromptNode, at: NodeAttempt, error: ErrorInfo, extra: { requested?: true } = {}) {
  return {
    type: 'custom_span' as const,
    parentId: at.parentSpan,
    nodeId: at.record.id,
    fields: {
      operation_name: 'reflection',
      metadata: { level: 'workflow', node: node.name, attempt: at.attempt, error: error.code, ...extra },
    },
  };
}
