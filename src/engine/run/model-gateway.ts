import type { CachedResponse } from '../../domain/cache.js';
import { AppError, toErrorInfo } from '../../domain/errors.js';
import type { LlmRequest, LlmResponse } from '../../domain/llm.js';
import type { ResolvedModel } from '../../domain/ports.js';
import { redactSecrets, redactValue } from '../../domain/redact.js';
import { shuttingDownError } from '../errors.js';
import type { ModelAnswer, ModelCall, ModelGateway } from '../node-context.js';
import type { RunJournal } from './journal.js';
import type { RequestBudget, RequestClaim } from './request-budget.js';
import type { EngineServices } from './services.js';
import { inputTokenBound, type SpendReservation } from './tenant-spend.js';
import { callWithRetry } from './transport-retry.js';

/**
 * Everything between a prompt and a provider for one run (docs/design.md#architecture-and-floors,
 * docs/design.md#execution, docs/design.md#reflection-and-retries, docs/design.md#caching): the response cache
 * (lookup, collapsing identical concurrent misses, hits that spend nothing), the request budget
 * (`limits.maxLlmCalls` counts provider requests: a limit on money), the global concurrency slots
 * (a freed one goes to the waiting tenant holding the fewest), the single transport-retry layer, the
 * agentPromptStart/End events and the generation spans.
 */
export class RunModelGateway implements ModelGateway {
  constructor(
    private readonly journal: RunJournal,
    private readonly services: EngineServices,
    private readonly tenantId: string,
    private readonly budget: RequestBudget,
  ) {}

  resolve(spec: string | undefined): ResolvedModel {
    return this.services.models.resolve(spec ?? this.services.models.defaultModel);
  }

  async call(model: ResolvedModel, request: LlmRequest, signal: AbortSignal, info: ModelCall): Promise<ModelAnswer> {
    const { cache } = this.services;
    if (!info.cacheable)
      return {
        ...(await this.callProvider(model, request, signal, info, null)),
        cacheKey: undefined,
        fromCache: false,
      };
    const key = cache.keyFor(info.agent, this.tenantId, model.provider, request);
    const hit = await cache.get(this.tenantId, key);
    if (hit) return this.servedFromCache(model, request, info, key, hit, false);
    const call = () => this.callProvider(model, request, signal, info, key);
    const shared = cache.collapse(this.tenantId, key, call);
    if (!shared.joined) this.journal.emit(info.nodeId, { type: 'cacheMiss', payload: { key, node: info.node } });
    try {
      const result = await shared.result;
      if (!shared.joined) return { ...result, cacheKey: key, fromCache: false };
      // Waited on an identical call in flight: a hit, like any other (docs/design.md#caching).
      cache.countJoined(this.tenantId, result.response, result.costUsd);
      const joined = { response: result.response, modelId: model.id, costUsd: result.costUsd };
      return this.servedFromCache(model, request, info, key, joined, true);
    } catch (err) {
      // A shared call ended by *another* caller's cancellation or deadline: make our own.
      if (signal.aborted || !isAbortOfAnother(err)) throw err;
      if (shared.joined) this.journal.emit(info.nodeId, { type: 'cacheMiss', payload: { key, node: info.node } });
      return { ...(await call()), cacheKey: key, fromCache: false };
    }
  }

  remember(model: ResolvedModel, answer: ModelAnswer): void {
    if (answer.cacheKey === undefined || answer.fromCache) return;
    const value = {
      // The cache is stored too (CACHE_PERSIST): what it keeps is redacted like a node's output.
      response: redactResponse(answer.response),
      modelId: model.id,
      costUsd: answer.costUsd,
      createdAt: this.services.clock.now(),
    };
    const key = answer.cacheKey;
    this.services.cache
      .set(this.tenantId, key, value)
      .catch((err) => this.services.onError(err, { tenantId: this.tenantId, cacheKey: key }));
  }

  /**
   * An answer the provider was not asked for: 0 tokens and 0 dollars spent, what it saved in fields
   * of its own; a simulate script moves on as the call would have (docs/design.md#caching,
   * docs/design.md#providers-and-models).
   */
  private servedFromCache(
    model: ResolvedModel,
    request: LlmRequest,
    info: ModelCall,
    key: string,
    cached: Pick<CachedResponse, 'response' | 'modelId' | 'costUsd'>,
    collapsed: boolean,
  ): ModelAnswer {
    model.client.replayed?.(request);
    const { usage } = cached.response;
    const labels = { ...(model.simulated ? { simulated: true } : {}), ...(collapsed ? { collapsed: true } : {}) };
    this.journal.recordSpan({
      type: 'generation_span',
      parentId: info.spanId,
      nodeId: info.nodeId,
      fields: {
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
      },
    });
    this.journal.emit(info.nodeId, {
      type: 'cacheHit',
      payload: {
        key,
        node: info.node,
        model: cached.modelId,
        tokenUsage: usage,
        costSavedUsd: cached.costUsd,
        ...labels,
      },
    });
    return { response: cached.response, costUsd: 0, cacheKey: key, fromCache: true };
  }

  private async callProvider(
    model: ResolvedModel,
    request: LlmRequest,
    signal: AbortSignal,
    info: ModelCall,
    cacheKey: string | null,
  ): Promise<{ response: LlmResponse; costUsd: number; latencyMs: number }> {
    // Taken before anything is recorded: a call the budget refuses is not a call (no span, no event).
    const first = this.budget.take();
    const span = {
      type: 'generation_span' as const,
      parentId: info.spanId,
      nodeId: info.nodeId,
      fields: {
        model: model.id,
        tokens_in: 0,
        tokens_out: 0,
        latency_ms: 0,
        cache_hit: false,
        cache_key: cacheKey,
        cost_usd: 0,
        ...(model.simulated ? { simulated: true } : {}),
      },
    };
    try {
      return await this.journal.withSpan(
        span,
        () => this.callAndReport(model, request, signal, info, first),
        (result) => ({
          fields: {
            tokens_in: result.response.usage.inputTokens,
            tokens_out: result.response.usage.outputTokens,
            latency_ms: result.latencyMs,
            cost_usd: result.costUsd,
          },
        }),
      );
    } finally {
      first.giveBack();
    }
  }

  private async callAndReport(
    model: ResolvedModel,
    request: LlmRequest,
    signal: AbortSignal,
    info: ModelCall,
    first: RequestClaim,
  ): Promise<{ response: LlmResponse; costUsd: number; latencyMs: number }> {
    const { services, journal, budget } = this;
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
    const prompt = info.prompt === undefined ? {} : { prompt: redactSecrets(info.prompt) };
    journal.emit(info.nodeId, { type: 'agentPromptStart', payload: { ...call, ...prompt } });
    journal.commitSoon();
    const started = clock.now();
    // This call's own requests: the budget is shared with the run's concurrent calls (parallel
    // branches), so the difference of two readings of it would count their requests too.
    let requests = 0;
    // The request the next attempt sends, taken from the budget before it waits for a slot.
    let claim = first;
    let response: LlmResponse;
    try {
      response = await callWithRetry(
        async () => {
          if (services.isStopping()) throw shuttingDownError();
          await services.llmSlots.acquire(signal, this.tenantId);
          try {
            // The service may have begun to stop while this call waited for its slot: it must not start
            // (its claim is given back by the finally below).
            if (services.isStopping()) throw shuttingDownError();
            // Money last, right before sending: a refusal here gives the claim back (the finally below).
            const reservation = await this.reserveSpend(model, request);
            try {
              await claim.send();
              requests++;
              const answer = await model.client.complete(request, { signal });
              reservation?.settle(services.models.costUsd(model.id, answer.usage));
              return answer;
            } finally {
              // A request that failed cost nothing (providers do not bill errors).
              reservation?.settle(0);
            }
          } finally {
            services.llmSlots.release(this.tenantId);
          }
        },
        {
          policy: services.retry,
          signal,
          clock,
          // A retry the request budget cannot pay for is not announced, and not sent.
          beforeRetry: () => {
            claim = budget.take();
          },
          onRetry: (notice) => {
            journal.emit(info.nodeId, {
              type: 'retry',
              payload: {
                node: info.node,
                reason: notice.reason,
                delayMs: notice.delayMs,
                attempt: notice.attempt,
                code: notice.error.code,
                message: redactSecrets(notice.error.message),
              },
            });
            journal.commitSoon();
          },
        },
      );
    } catch (err) {
      // Every call that started ends with its event: the requests it sent are counted either way.
      journal.emit(info.nodeId, {
        type: 'agentPromptEnd',
        payload: {
          ...call,
          duration: clock.now() - started,
          requests,
          error: toErrorInfo(err),
        },
      });
      throw err;
    } finally {
      // A retry's request taken but never sent (the call was cancelled during its wait).
      claim.giveBack();
    }
    const costUsd = services.models.costUsd(model.id, response.usage);
    const latencyMs = clock.now() - started;
    journal.emit(info.nodeId, {
      type: 'agentPromptEnd',
      payload: {
        ...call,
        duration: latencyMs,
        requests,
        tokenUsage: response.usage,
        costUsd,
        stopReason: response.stopReason,
      },
    });
    return { response, costUsd, latencyMs };
  }

  /** The call's worst case held against the tenant's daily budget (real money only), or a refusal. */
  private reserveSpend(model: ResolvedModel, request: LlmRequest): Promise<SpendReservation | undefined> {
    const { spend, models } = this.services;
    if (spend.budgetUsd === undefined || model.simulated) return Promise.resolve(undefined);
    const worst = models.costUsd(model.id, { inputTokens: inputTokenBound(request), outputTokens: request.maxTokens });
    return spend.reserve(this.tenantId, worst);
  }
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
