import { agentNamed, type PromptNode, type WorkflowNode } from '../domain/definition.js';
import type { WorkflowEvent } from '../domain/events.js';
import type { ModelUsage, RetryReason, UsageTier } from '../domain/metrics.js';
import type { NodeRecord, WorkflowRecord } from '../domain/records.js';
import type { ReflectionEntry } from '../domain/reflection.js';

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
  /** Failures of an answer against its responseFormat, per node id. */
  formatFailures: Map<string, number>;
  /** Every error code seen: error events, node errors, the workflow's error. */
  errorCodes: Set<string>;
}

export const FORMAT_ERROR_CODES: ReadonlySet<string> = new Set(['INVALID_RESPONSE_FORMAT', 'VALIDATION_FAILED']);

export function tierOfModel(modelId: string): UsageTier {
  const name = modelId.slice(modelId.indexOf('/') + 1).toLowerCase();
  for (const tier of ['haiku', 'sonnet', 'opus'] as const) if (name.includes(tier)) return tier;
  return 'other';
}

/**
 * Reflection retries carry the failure's error code; the seed's closed `retry_reasons` name kinds
 * of failure. An answer that broke its responseFormat (not JSON, or not matching the schema) is a
 * failed check of the output — `test_failure`; provider throttling is `rate_limit`; any deadline is
 * `timeout`; a missing tool, model or template input is `dependency_conflict`; anything else the
 * node's own check rejected is `test_failure` too. `review_rejection` is for review nodes.
 */
const REFLECTION_RETRY_REASONS: Readonly<Record<string, RetryReason>> = {
  INVALID_RESPONSE_FORMAT: 'test_failure',
  VALIDATION_FAILED: 'test_failure',
  LLM_RATE_LIMIT: 'rate_limit',
  LLM_OVERLOADED: 'rate_limit',
  LLM_QUOTA: 'rate_limit',
  NODE_TIMEOUT: 'timeout',
  LLM_TIMEOUT: 'timeout',
  WORKFLOW_TIMEOUT: 'timeout',
  UNKNOWN_TOOL: 'dependency_conflict',
  UNKNOWN_MODEL: 'dependency_conflict',
  MISSING_CONTEXT: 'dependency_conflict',
  REVIEW_REJECTED: 'review_rejection',
};

export function reflectionRetryReason(code: string): RetryReason {
  return REFLECTION_RETRY_REASONS[code] ?? 'test_failure';
}

/** Transport retries are emitted as `rate_limit` or `timeout` already; anything else reads as `timeout`. */
function transportRetryReason(reason: unknown): RetryReason {
  return reason === 'rate_limit' ? 'rate_limit' : 'timeout';
}

const str = (payload: Record<string, unknown>, key: string): string | undefined => {
  const value = payload[key];
  return typeof value === 'string' ? value : undefined;
};
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

function tokenUsage(payload: Record<string, unknown>): { input: number; output: number } {
  const usage = payload.tokenUsage;
  if (typeof usage !== 'object' || usage === null) return { input: 0, output: 0 };
  const u = usage as Record<string, unknown>;
  return { input: num(u.inputTokens), output: num(u.outputTokens) };
}

export function promptNodesOf(root: WorkflowNode): Map<string, PromptNode> {
  const prompts = new Map<string, PromptNode>();
  const visit = (node: WorkflowNode): void => {
    if (node.type === 'prompt') prompts.set(node.name, node);
    else if (node.type === 'sequence' || node.type === 'parallel') for (const step of node.steps) visit(step);
  };
  visit(root);
  return prompts;
}

/**
 * A transport retry succeeded when the next thing that happened to its call was the call's
 * `agentPromptEnd`. A node's calls are sequential, so that is the next event of the same node
 * among agentPromptEnd / agentPromptStart / retry / error / stepEnd.
 */
function transportRetries(events: readonly WorkflowEvent[]): RetryFact[] {
  const retries: RetryFact[] = [];
  const watched = new Set(['agentPromptEnd', 'agentPromptStart', 'retry', 'error', 'stepEnd']);
  events.forEach((event, i) => {
    if (event.type !== 'retry') return;
    const next = events.slice(i + 1).find((e) => e.nodeId === event.nodeId && watched.has(e.type));
    retries.push({
      kind: 'transport',
      at: event.at,
      reason: transportRetryReason(event.payload.reason),
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
    formatFailures: new Map(),
    errorCodes: new Set(),
  };
  const addFormatFailure = (nodeId: string | null) => {
    if (nodeId !== null) facts.formatFailures.set(nodeId, (facts.formatFailures.get(nodeId) ?? 0) + 1);
  };

  const executions = new Set<string>();
  for (const event of events) {
    const p = event.payload;
    switch (event.type) {
      case 'agentPromptStart': {
        const model = str(p, 'model') ?? 'unknown';
        facts.calls++;
        const usage = usageOf(model);
        usage.calls++;
        if (p.simulated === true) usage.simulated = true;
        byTier[tierOfModel(model)].calls++;
        executions.add(`${event.nodeId}:${num(p.attempt)}`);
        break;
      }
      case 'agentPromptEnd': {
        const model = str(p, 'model') ?? 'unknown';
        const { input: tokensIn, output: tokensOut } = tokenUsage(p);
        const usage = usageOf(model);
        const requests = num(p.requests);
        usage.requests = (usage.requests ?? 0) + requests;
        facts.requests += requests;
        if (p.error === undefined && tierOfModel(model) === 'haiku') facts.haikuSuccesses++;
        usage.tokens_in += tokensIn;
        usage.tokens_out += tokensOut;
        usage.cost_usd += num(p.costUsd);
        byTier[tierOfModel(model)].est_tokens += tokensIn + tokensOut;
        break;
      }
      case 'cacheHit':
        facts.cacheHits++;
        break;
      case 'toolInvocation': {
        facts.toolCalls++;
        if (p.isError !== true) facts.toolSuccesses++;
        const prompt = prompts.get(str(p, 'node') ?? nodeNames.get(event.nodeId ?? '') ?? '');
        const tools = prompt ? (agentNamed(workflow.definition.agents, prompt.agent)?.tools ?? []) : [];
        if (!tools.includes(str(p, 'toolName') ?? '')) facts.toolMisselections++;
        break;
      }
      case 'invalidResponse':
        addFormatFailure(event.nodeId);
        break;
      case 'error': {
        const code = str(p, 'code');
        if (code !== undefined) facts.errorCodes.add(code);
        if (code !== undefined && FORMAT_ERROR_CODES.has(code)) addFormatFailure(event.nodeId);
        break;
      }
      default:
        break;
    }
  }
  facts.agentExecutions = executions.size;
  for (const usage of Object.values(byModel)) usage.cost_usd = round(usage.cost_usd, 8);
  for (const node of nodes) if (node.error) facts.errorCodes.add(node.error.code);
  if (workflow.error) facts.errorCodes.add(workflow.error.code);

  for (const parallel of nodes.filter((n) => n.type === 'parallel')) {
    const ran = descendantsOf(nodes, parallel.id).filter((n) => n.type === 'prompt' && n.attempts > 0);
    if (ran.length >= 2) facts.parallelOverlaps.push(maxOverlap(events, new Set(ran.map((n) => n.id))));
  }
  return facts;
}

export function round(value: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
