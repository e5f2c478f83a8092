import { DEFAULTS, type PromptNode } from '../domain/definition.js';
import { type ErrorInfo, toErrorInfo } from '../domain/errors.js';
import { responseText } from '../domain/llm.js';
import type { NodeRecord } from '../domain/records.js';
import type { ReflectionAdvice } from '../domain/reflection.js';
import {
  applyRevisions,
  decide,
  isPromptReflectable,
  isReflectable,
  parseReflectionAdvice,
  reflectionRequestMessage,
  reflectionResponseFormat,
  resolutionOf,
} from '../reflection/policy.js';
import { withDeadline } from './deadline.js';
import { callModel } from './model-call.js';
import { nodeDeadlineError, preparePrompt } from './prompt-request.js';
import type { Run } from './run.js';
import { isCancellation, isShutdown } from './services.js';

/**
 * Workflow-level reflection (DESIGN §5): a prompt node failed with a reflectable error, so its own
 * agent is asked whether and how to retry. The answer's revisions are applied to the next attempt;
 * when the reflection call itself fails, the fallback retries while attempts remain. Returns whether
 * the node runs again.
 */
export async function reflectOnFailure(
  run: Run,
  node: PromptNode,
  record: NodeRecord,
  failure: unknown,
  attempt: number,
  signal: AbortSignal,
  parentSpan: string,
): Promise<boolean> {
  if (!run.reflections.workflowLevel || !isReflectable(failure)) return false;
  // Format failures were already re-asked in the conversation by prompt-level reflection.
  if (isPromptReflectable(failure) && run.reflections.promptLevel(node)) return false;
  const maxAttempts = run.reflections.maxAttempts;
  if (attempt >= maxAttempts) return false;

  const error = toErrorInfo(failure);
  run.emit('reflectionStart', record.id, { level: 'workflow', node: node.name, attempt });
  const span = run.spans.start('custom_span', parentSpan, record.id, {
    operation_name: 'reflection',
    metadata: { level: 'workflow', node: node.name, attempt, error: error.code },
  });
  let advice: ReflectionAdvice | undefined;
  try {
    advice = await askForAdvice(run, node, record, error, attempt, maxAttempts, signal, span);
  } catch (err) {
    run.spans.end(span, isShutdown(err) ? 'interrupted' : 'error', undefined, toErrorInfo(err));
    throw err;
  }
  const decision = decide({ advice, attempt, maxAttempts, optional: node.optional === true });
  run.spans.end(span, 'ok', {
    metadata: { level: 'workflow', node: node.name, attempt, error: error.code, decision: decision.decision },
  });
  const applied =
    decision.decision === 'retry' ? applyRevisions(run.reflections.inputs(node, record), advice) : undefined;
  if (applied) run.reflections.revise(record.id, { data: applied.data, system: applied.system });
  run.reflections.record({
    node: record,
    attempt,
    level: 'workflow',
    reason: decision.reason,
    error,
    resolution: resolutionOf(decision.decision, applied),
    decisionSuccess: decision.success,
  });
  return decision.decision === 'retry';
}

async function askForAdvice(
  run: Run,
  node: PromptNode,
  record: NodeRecord,
  error: ErrorInfo,
  attempt: number,
  maxAttempts: number,
  signal: AbortSignal,
  span: string,
): Promise<ReflectionAdvice | undefined> {
  const inputs = run.reflections.inputs(node, record);
  const { model, request, user } = preparePrompt(run, node, inputs);
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
          attempt,
          maxAttempts,
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
  const deadline = withDeadline(signal, timeoutMs, () => nodeDeadlineError(node, timeoutMs), run.services.clock.now());
  try {
    const { response } = await callModel(run, model, reflectionRequest, deadline.signal, {
      node: node.name,
      nodeId: record.id,
      agent: node.agent,
      attempt,
      turn: 1,
      prompt: undefined,
      purpose: 'reflection',
      cacheable: false,
      spanId: span,
    });
    return parseReflectionAdvice(responseText(response));
  } catch (err) {
    // Cancellation and shutdown end the run; any other failure of the reflection call falls back.
    if (isShutdown(err) || isCancellation(err) || signal.aborted) throw err;
    return undefined;
  } finally {
    deadline.dispose();
  }
}
