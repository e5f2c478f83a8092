import { TIERS } from '../domain/allocation.js';
import { agentNamed, agentNameOf, NODE_KINDS, type PromptNode, promptNodesOf } from '../domain/definition.js';
import { meaningOf } from '../domain/errors.js';
import type { WorkflowEvent } from '../domain/events.js';
import type { ModelUsage, RetryReason, UsageTier } from '../domain/metrics.js';
import type { NodeRecord, WorkflowRecord } from '../domain/records.js';
import type { ReflectionEntry } from '../domain/reflection.js';
import type { ReviewDecision } from '../domain/review.js';

/**
 * What a finished run did, read off its events, node rows and reflection history. Every number of
 * the efficiency record comes from here; the rules that judge them are in outcome.ts and
 * efficiency.ts. Only the workflow's own events count: a child workflow has its own record.
 */

export interface RunInput {
  workflow: WorkflowRecord;
  nodes: NodeRecord[];
  /** All the workflow's events, in `seq` order. */
  events: WorkflowEvent[];
  reflections: ReflectionEntry[];
  /** Epoch ms of the end (the workflow's `endedAt`). */
  endedAt: number;
}

export interface RetryFact {
  kind: 'transport' | 'reflection';
  reason: RetryReason;
  /** Epoch ms: retries are listed in time order. */
  at: number;
  success: boolean;
}

export interface RunFacts {
  /** Prompt nodes of this workflow's own tree (child workflows excluded), by name. */
  prompts: Map<string, PromptNode>;
  /** Logical model calls made: `agentPromptStart` events (cache hits and refused calls never emit one). */
  calls: number;
  /** Requests sent to providers, every attempt: Σ `agentPromptEnd.requests`. */
  requests: number;
  /** Agent executions (node attempts) that sent at least one provider request. */
  agentExecutions: number;
  /** Calls to a haiku-tier model that ended with an answer. */
  haikuSuccesses: number;
  byModel: Record<string, ModelUsage>;
  byTier: Record<UsageTier, { calls: number; est_tokens: number }>;
  cacheHits: number;
  retries: RetryFact[];
  toolCalls: number;
  toolSuccesses: number;
  /** Tool invocations that named a tool their agent does not have. */
  toolMisselections: number;
  /** Per parallel node that ran ≥ 2 prompts: the most of them that were running at once. */
  parallelOverlaps: number[];
  /** memory_retrieval_relevant of each retrieval run that retrieved something (retrievalEnd). */
  retrievalRelevance: boolean[];
  /** Failures of an answer against its responseFormat, per node id. */
  formatFailures: Map<string, number>;
  /** Every error code seen: error events, node errors, the workflow's error. */
  errorCodes: Set<string>;
  /** The decision of each review node that decided (its last reviewEnd), in the order they ended. */
  reviews: ReviewDecision[];
}

/** An answer that broke its responseFormat (not JSON, or not matching): the codes re-asked on. */
export function isFormatError(code: string): boolean {
  return meaningOf(code).reAsk === true;
}

export function tierOfModel(modelId: string): UsageTier {
  const name = modelId.slice(modelId.indexOf('/') + 1).toLowerCase();
  for (const tier of TIERS) if (name.includes(tier)) return tier;
  return 'other';
}

/** The seed's retry reason of a reflection retry: what ERROR_CODES says of the code that caused it. */
export function reflectionRetryReason(code: string): RetryReason {
  return meaningOf(code).retryReason;
}

/**
 * A transport retry succeeded when its call recovered: the call's `agentPromptEnd` came before
 * anything else ended it, further retries of the same call in between (a 429 → 503 → ok chain is
 * two successful retries: each was a step to the answer). A node's calls are sequential, so that is
 * the next event of the same node among agentPromptEnd / agentPromptStart / error / stepEnd.
 */
function transportRetries(events: readonly WorkflowEvent[]): RetryFact[] {
  const retries: RetryFact[] = [];
  const watched = new Set(['agentPromptEnd', 'agentPromptStart', 'error', 'stepEnd']);
  events.forEach((event, i) => {
    if (event.type !== 'retry') return;
    const next = events.slice(i + 1).find((e) => e.nodeId === event.nodeId && watched.has(e.type));
    retries.push({
      kind: 'transport',
      at: event.at,
      reason: event.payload.reason,
      success: next?.type === 'agentPromptEnd' && next.payload.error === undefined,
    });
  });
  return retries;
}

/** Reflection retries: entries whose decision was `retry`; successful when the attempt after succeeded. */
function reflectionRetries(reflections: readonly ReflectionEntry[]): RetryFact[] {
  return reflections
    .filter((entry) => entry.resolution.decision === 'retry')
    .map((entry) => ({
      kind: 'reflection',
      at: entry.timestamp,
      reason: reflectionRetryReason(entry.error.code),
      success: entry.success === true,
    }));
}

function descendantsOf(nodes: readonly NodeRecord[], id: string): NodeRecord[] {
  const out: NodeRecord[] = [];
  const stack = [id];
  while (stack.length > 0) {
    const parent = stack.pop();
    for (const node of nodes) {
      if (node.parentId === parent) {
        out.push(node);
        stack.push(node.id);
      }
    }
  }
  return out;
}

/** Sweeps stepStart/stepEnd of the given prompt nodes: the most that were running at once. */
function maxOverlap(events: readonly WorkflowEvent[], ids: ReadonlySet<string>): number {
  const running = new Set<string>();
  let max = 0;
  for (const event of events) {
    if (event.nodeId === null || !ids.has(event.nodeId)) continue;
    if (event.type === 'stepStart') running.add(event.nodeId);
    else if (event.type === 'stepEnd') running.delete(event.nodeId);
    max = Math.max(max, running.size);
  }
  return max;
}

export function collectFacts(input: RunInput): RunFacts {
  const { workflow, nodes, events, reflections } = input;
  const prompts = promptNodesOf(workflow.definition.root);
  const nodeNames = new Map(nodes.map((n) => [n.id, n.name]));
  const byModel: Record<string, ModelUsage> = {};
  const byTier: RunFacts['byTier'] = {
    haiku: { calls: 0, est_tokens: 0 },
    sonnet: { calls: 0, est_tokens: 0 },
    opus: { calls: 0, est_tokens: 0 },
    other: { calls: 0, est_tokens: 0 },
  };
  const usageOf = (model: string): ModelUsage => {
    byModel[model] ??= { calls: 0, requests: 0, tokens_in: 0, tokens_out: 0, cost_usd: 0 };
    return byModel[model];
  };
  const facts: RunFacts = {
    prompts,
    calls: 0,
    requests: 0,
    agentExecutions: 0,
    haikuSuccesses: 0,
    byModel,
    byTier,
    cacheHits: 0,
    retries: [...transportRetries(events), ...reflectionRetries(reflections)].sort((a, b) => a.at - b.at),
    toolCalls: 0,
    toolSuccesses: 0,
    toolMisselections: 0,
    parallelOverlaps: [],
    retrievalRelevance: [],
    formatFailures: new Map(),
    errorCodes: new Set(),
    reviews: [],
  };
  const reviews = new Map<string | null, ReviewDecision>();
  const addFormatFailure = (nodeId: string | null) => {
    if (nodeId !== null) facts.formatFailures.set(nodeId, (facts.formatFailures.get(nodeId) ?? 0) + 1);
  };

  const executions = new Set<string>();
  for (const event of events) {
    switch (event.type) {
      case 'agentPromptStart': {
        const { model, simulated, attempt } = event.payload;
        facts.calls++;
        const usage = usageOf(model);
        usage.calls++;
        if (simulated) usage.simulated = true;
        byTier[tierOfModel(model)].calls++;
        executions.add(`${event.nodeId}:${attempt}`);
        break;
      }
      case 'agentPromptEnd': {
        const { model, requests, tokenUsage, costUsd, error } = event.payload;
        const tokensIn = tokenUsage?.inputTokens ?? 0;
        const tokensOut = tokenUsage?.outputTokens ?? 0;
        const usage = usageOf(model);
        usage.requests = (usage.requests ?? 0) + requests;
        facts.requests += requests;
        if (error === undefined && tierOfModel(model) === 'haiku') facts.haikuSuccesses++;
        usage.tokens_in += tokensIn;
        usage.tokens_out += tokensOut;
        usage.cost_usd += costUsd ?? 0;
        byTier[tierOfModel(model)].est_tokens += tokensIn + tokensOut;
        break;
      }
      case 'cacheHit':
        facts.cacheHits++;
        break;
      case 'toolInvocation': {
        facts.toolCalls++;
        if (!event.payload.isError) facts.toolSuccesses++;
        const prompt = prompts.get(event.payload.node || (nodeNames.get(event.nodeId ?? '') ?? ''));
        const tools = prompt ? (agentNamed(workflow.definition.agents, agentNameOf(prompt))?.tools ?? []) : [];
        // A prompt with `retrieval` is given `retrieve` on top of its agent's tools.
        const offered = event.payload.toolName === 'retrieve' && prompt?.retrieval !== undefined;
        if (!offered && !tools.includes(event.payload.toolName)) facts.toolMisselections++;
        break;
      }
      case 'retrievalEnd':
        if (event.payload.relevant !== null) facts.retrievalRelevance.push(event.payload.relevant);
        break;
      case 'invalidResponse':
        addFormatFailure(event.nodeId);
        break;
      case 'reviewEnd':
        reviews.delete(event.nodeId);
        reviews.set(event.nodeId, event.payload.decision);
        break;
      case 'error': {
        const { code } = event.payload;
        facts.errorCodes.add(code);
        if (isFormatError(code)) addFormatFailure(event.nodeId);
        break;
      }
      default:
        break;
    }
  }
  facts.agentExecutions = executions.size;
  facts.reviews = [...reviews.values()];
  for (const usage of Object.values(byModel)) usage.cost_usd = round(usage.cost_usd, 8);
  for (const node of nodes) if (node.error) facts.errorCodes.add(node.error.code);
  if (workflow.error) facts.errorCodes.add(workflow.error.code);

  for (const parallel of nodes.filter((n) => NODE_KINDS[n.type].concurrentSteps)) {
    const ran = descendantsOf(nodes, parallel.id).filter((n) => NODE_KINDS[n.type].callsModel && n.attempts > 0);
    if (ran.length >= 2) facts.parallelOverlaps.push(maxOverlap(events, new Set(ran.map((n) => n.id))));
  }
  return facts;
}

export function round(value: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
