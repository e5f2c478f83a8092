import type { CachedResponse } from '../domain/cache.js';
import { AppError, toErrorInfo } from '../domain/errors.js';
import type { LlmRequest, LlmResponse, ToolResultBlock, ToolUseBlock } from '../domain/llm.js';
import type { ResolvedModel } from '../domain/ports.js';
import type { NodeRecord } from '../domain/records.js';
import { redactSecrets, redactValue } from '../domain/redact.js';
import type { Run } from './run.js';
import { isShutdown, shuttingDownError } from './services.js';
import { callWithRetry } from './transport-retry.js';

/**
 * One model call of a run: the agentPromptStart/End events, the workflow's call budget, the global
 * concurrency limit and the single transport-retry layer (DESIGN §4, §5.1).
 */
export interface CallInfo {
  node: string;
  nodeId: string;
  agent: string;
  attempt: number;
  turn: number;
  /** The rendered user message, recorded on the first turn only. */
  prompt: string | undefined;
  /** What the call is for when it is not the prompt itself (e.g. `reflection`). */
  purpose?: string;
  /** Look up and collapse in the response cache (DESIGN §6 toggles). */
  cacheable: boolean;
  /** The span the call's generation_span hangs under (the node's agent_span). */
  spanId: string;
}

/** A model answer and where it came from. */
export interface ModelAnswer {
  response: LlmResponse;
  costUsd: number;
  /** Set when the call was cacheable: the key it was looked up under. */
  cacheKey: string | undefined;
  fromCache: boolean;
}

/**
 * Looks the effective request up in the response cache first (DESIGN §6), else calls the provider;
 * identical concurrent misses share one call. Storing the answer is the caller's decision: only
 * after it proved good (a final answer after validation).
 */
export async function callModel(
  run: Run,
  model: ResolvedModel,
  request: LlmRequest,
  signal: AbortSignal,
  info: CallInfo,
): Promise<ModelAnswer> {
  const { cache } = run.services;
  const tenantId = run.workflow.tenantId;
  if (!info.cacheable) {
    return { ...(await callProvider(run, model, request, signal, info, null)), cacheKey: undefined, fromCache: false };
  }

  const key = cache.keyFor(info.agent, tenantId, model.provider, request);
  const hit = await cache.get(tenantId, key);
  if (hit) return servedFromCache(run, model, request, info, key, hit, false);
  const call = () => callProvider(run, model, request, signal, info, key);
  const shared = cache.collapse(tenantId, key, call);
  if (!shared.joined) run.emit('cacheMiss', info.nodeId, { key, node: info.node });
  try {
    const result = await shared.result;
    if (!shared.joined) return { ...result, cacheKey: key, fromCache: false };
    // Waited on an identical call in flight: a hit, like any other (DESIGN §6).
    cache.countJoined(tenantId, result.response, result.costUsd);
    const joined = { response: result.response, modelId: model.id, costUsd: result.costUsd };
    return servedFromCache(run, model, request, info, key, joined, true);
  } catch (err) {
    // A shared call ended by *another* caller's cancellation or deadline: make our own.
    if (signal.aborted || !isAbortOfAnother(err)) throw err;
    if (shared.joined) run.emit('cacheMiss', info.nodeId, { key, node: info.node });
    return { ...(await call()), cacheKey: key, fromCache: false };
  }
}

/**
 * An answer the provider was not asked for: 0 tokens and 0 dollars spent, what it saved in fields of
 * its own; a simulate script moves on as the call would have (DESIGN §6, §7).
 */
function servedFromCache(
  run: Run,
  model: ResolvedModel,
  request: LlmRequest,
  info: CallInfo,
  key: string,
  cached: Pick<CachedResponse, 'response' | 'modelId' | 'costUsd'>,
  collapsed: boolean,
): ModelAnswer {
  model.client.replayed?.(request);
  const { usage } = cached.response;
  const labels = { ...(model.simulated ? { simulated: true } : {}), ...(collapsed ? { collapsed: true } : {}) };
  run.spans.record('generation_span', info.spanId, info.nodeId, {
    model: cached.modelId,
    tokens_in: 0,
    tokens_out: 0,
    latency_ms: 0,
    cache_hit: true,
    cache_key: key,
    cost_usd: 0,
    tokens_saved_in: usage.inputTokens,
    tokens_saved_out: usage.outputTokens,
    cost_saved_usd: cached.costUsd,
    ...labels,
  });
  run.emit('cacheHit', info.nodeId, {
    key,
    node: info.node,
    model: cached.modelId,
    tokenUsage: usage,
    costSavedUsd: cached.costUsd,
    ...labels,
  });
  return { response: cached.response, costUsd: 0, cacheKey: key, fromCache: true };
}

/** Stores a good answer under its key; cache trouble never fails the run. */
export function rememberAnswer(run: Run, model: ResolvedModel, answer: ModelAnswer): void {
  if (answer.cacheKey === undefined || answer.fromCache) return;
  const value = {
    // The cache is stored too (CACHE_PERSIST): what it keeps is redacted like a node's output.
    response: redactResponse(answer.response),
    modelId: model.id,
    costUsd: answer.costUsd,
    createdAt: run.services.clock.now(),
  };
  run.services.cache
    .set(run.workflow.tenantId, answer.cacheKey, value)
    .catch((err) => run.services.onError(err, { workflowId: run.workflow.id, cacheKey: answer.cacheKey }));
}

function redactResponse(response: LlmResponse): LlmResponse {
  const content = redactValue(response.content) as LlmResponse['content'];
  return content === response.content ? response : { ...response, content };
}

function isAbortOfAnother(err: unknown): boolean {
  return (
    err instanceof AppError &&
    (err.code === 'CANCELLED' || err.code === 'NODE_TIMEOUT' || err.code === 'WORKFLOW_TIMEOUT')
  );
}

async function callProvider(
  run: Run,
  model: ResolvedModel,
  request: LlmRequest,
  signal: AbortSignal,
  info: CallInfo,
  cacheKey: string | null,
): Promise<{ response: LlmResponse; costUsd: number }> {
  checkRequestBudget(run);
  const span = run.spans.start('generation_span', info.spanId, info.nodeId, {
    model: model.id,
    tokens_in: 0,
    tokens_out: 0,
    latency_ms: 0,
    cache_hit: false,
    cache_key: cacheKey,
    cost_usd: 0,
    ...(model.simulated ? { simulated: true } : {}),
  });
  try {
    const result = await callAndReport(run, model, request, signal, info);
    run.spans.end(span, 'ok', {
      tokens_in: result.response.usage.inputTokens,
      tokens_out: result.response.usage.outputTokens,
      latency_ms: result.latencyMs,
      cost_usd: result.costUsd,
    });
    return result;
  } catch (err) {
    run.spans.end(span, isShutdown(err) ? 'interrupted' : 'error', undefined, toErrorInfo(err));
    throw err;
  }
}

async function callAndReport(
  run: Run,
  model: ResolvedModel,
  request: LlmRequest,
  signal: AbortSignal,
  info: CallInfo,
): Promise<{ response: LlmResponse; costUsd: number; latencyMs: number }> {
  const { services } = run;
  const { clock } = services;
  const call = {
    node: info.node,
    agent: info.agent,
    model: model.id,
    simulated: model.simulated,
    attempt: info.attempt,
    turn: info.turn,
    ...(info.purpose === undefined ? {} : { purpose: info.purpose }),
  };
  run.emit('agentPromptStart', info.nodeId, {
    ...call,
    ...(info.prompt === undefined ? {} : { prompt: redactSecrets(info.prompt) }),
  });
  run.flushInBackground();
  const started = clock.now();
  const sentBefore = run.providerRequests;
  let response: LlmResponse;
  try {
    response = await callWithRetry(
      async () => {
        if (services.isStopping()) throw shuttingDownError();
        await services.llmSlots.acquire(signal, run.workflow.tenantId);
        try {
          run.providerRequests++;
          return await model.client.complete(request, { signal });
        } finally {
          services.llmSlots.release();
        }
      },
      {
        policy: services.retry,
        signal,
        clock,
        // A retry the request budget cannot pay for is not announced, and not sent.
        beforeRetry: () => checkRequestBudget(run),
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
  } catch (err) {
    // Every call that started ends with its event: the requests it sent are counted either way.
    run.emit('agentPromptEnd', info.nodeId, {
      ...call,
      duration: clock.now() - started,
      requests: run.providerRequests - sentBefore,
      error: toErrorInfo(err),
    });
    throw err;
  }
  const costUsd = services.models.costUsd(model.id, response.usage);
  const latencyMs = clock.now() - started;
  run.emit('agentPromptEnd', info.nodeId, {
    ...call,
    duration: latencyMs,
    requests: run.providerRequests - sentBefore,
    tokenUsage: response.usage,
    costUsd,
    stopReason: response.stopReason,
  });
  return { response, costUsd, latencyMs };
}

/**
 * `limits.maxLlmCalls` bounds the provider requests a workflow sends, every attempt counted (DESIGN
 * §9: a limit on money). A call it refuses is not a call: no span, no event, nothing counted.
 */
function checkRequestBudget(run: Run): void {
  if (run.providerRequests < run.requestLimit) return;
  throw new AppError(
    'LLM_CALL_LIMIT_EXCEEDED',
    `the workflow sent the ${run.requestLimit} provider requests its limit allows (options.limits.maxLlmCalls)`,
  );
}

export async function invokeTool(
  run: Run,
  use: ToolUseBlock,
  record: NodeRecord,
  allowed: ReadonlySet<string>,
  parentSpan: string,
): Promise<ToolResultBlock> {
  const started = run.services.clock.now();
  const span = run.spans.start('function_span', parentSpan, record.id, {
    function_name: use.name,
    arguments: redactValue(use.input),
    result: null,
    success: false,
  });
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
  run.spans.end(span, result.isError ? 'error' : 'ok', { result: result.output, success: !result.isError });
  const block: ToolResultBlock = { type: 'tool_result', tool_use_id: use.id, content: result.content };
  if (result.isError) block.is_error = true;
  return block;
}
