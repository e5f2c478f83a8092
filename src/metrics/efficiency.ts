import { NODE_KINDS } from '../domain/definition.js';
import {
  EFFICIENCY_FACTORS,
  type EfficiencyFactor,
  type EfficiencyRecord,
  type Outcome,
  type RetryReason,
} from '../domain/metrics.js';
import type { Complexity } from '../domain/task.js';
import { classifyComplexity } from './complexity.js';
import { decideOutcome, type ReviewVerdict, verdictOf } from './outcome.js';
import { collectFacts, type RunFacts, type RunInput, round } from './run-facts.js';
import { subtreeUsage } from './subtree.js';

/**
 * The efficiency record of a terminal workflow (docs/design.md#events-spans-metrics-and-rewards, the seed's
 * efficiency tracking schema)
 * and its score. Pure: everything is derived from the run's rows and events.
 */

export interface Baseline {
  timeSeconds: number;
  agents: number;
  retries: number;
}

/** The seed's baseline expectations by complexity. */
export const EFFICIENCY_BASELINES: Readonly<Record<Complexity, Baseline>> = {
  trivial: { timeSeconds: 60, agents: 1, retries: 0 },
  simple: { timeSeconds: 180, agents: 2, retries: 0 },
  moderate: { timeSeconds: 600, agents: 4, retries: 1 },
  complex: { timeSeconds: 1800, agents: 8, retries: 2 },
  critical: { timeSeconds: 3600, agents: 12, retries: 3 },
};

export interface EfficiencyInput {
  wallTimeSeconds: number;
  agentsSpawned: number;
  retryCount: number;
}

/** [0, 1]; NaN (a nonsense input) counts as 0. */
export function clamp01(x: number): number {
  if (Number.isNaN(x)) return 0;
  return Math.min(1, Math.max(0, x));
}

/**
 * `0.5·min(1, T/max(t,1)) + 0.3·min(1, A/max(a,1)) + 0.2·clamp01(1 − r/(R+3))` with the baseline
 * {T, A, R} of the complexity. The seed's retry term goes negative past R+3 retries; this design bounds
 * it, so the score never leaves [0, 1] (each term is clamped, whatever the inputs).
 */
export function efficiencyScore(complexity: Complexity, input: EfficiencyInput): number {
  const b = EFFICIENCY_BASELINES[complexity];
  const time = clamp01(b.timeSeconds / Math.max(input.wallTimeSeconds, 1));
  const agents = clamp01(b.agents / Math.max(input.agentsSpawned, 1));
  const retries = clamp01(1 - input.retryCount / (b.retries + 3));
  return clamp01(0.5 * time + 0.3 * agents + 0.2 * retries);
}

const isSimple = (complexity: Complexity): boolean => complexity === 'trivial' || complexity === 'simple';

/**
 * Efficiency factors, each by an explicit rule (seed vocabulary, listed in its order):
 * - used_haiku_for_simple: a successful trivial/simple task, every call to a haiku-tier model, and ≥ 1 of
 *   them answered (a failed run earns no praise for its model choice).
 * - parallel_execution: a parallel node had ≥ 2 of its prompts running at the same time.
 * - cached_result: ≥ 1 answer served from the response cache.
 * - first_try_success: outcome success with no retry of any kind.
 * - spec_driven: every prompt that ran declared a responseFormat (answers checked against a spec); a
 *   review's verdicts always are.
 * - used_opus_for_simple: trivial/simple task and ≥ 1 call to an opus-tier model.
 * - sequential_when_parallel_possible: a parallel node ran ≥ 2 prompts but never two at once, and
 *   the task's allocation allowed parallelism (a routed simple task runs one step at a time by rule).
 * - multiple_retries: ≥ 2 retries (transport and reflection together).
 * - missing_context: a MISSING_CONTEXT error anywhere in the run (a template referenced no output).
 * - unclear_requirements: one node's answers broke its responseFormat ≥ 2 times.
 */
export function efficiencyFactors(
  facts: RunFacts,
  context: {
    complexity: Complexity;
    outcome: Outcome;
    ranPrompts: readonly string[];
    /** False when the task's allocation runs parallel nodes one step at a time (routing/allocation.ts). */
    parallelAllowed: boolean;
  },
): EfficiencyFactor[] {
  const { complexity, outcome, ranPrompts, parallelAllowed } = context;
  const on = new Set<EfficiencyFactor>();
  if (
    outcome === 'success' &&
    isSimple(complexity) &&
    facts.haikuSuccesses > 0 &&
    facts.byTier.haiku.calls === facts.calls
  ) {
    on.add('used_haiku_for_simple');
  }
  if (facts.parallelOverlaps.some((n) => n >= 2)) on.add('parallel_execution');
  if (facts.cacheHits > 0) on.add('cached_result');
  if (outcome === 'success' && facts.retries.length === 0) on.add('first_try_success');
  // A model-calling node that is not a prompt (a review) always asks for a schema: its verdict.
  const specified = (name: string) => !facts.prompts.has(name) || facts.prompts.get(name)?.responseFormat !== undefined;
  if (ranPrompts.length > 0 && ranPrompts.every(specified)) {
    on.add('spec_driven');
  }
  if (isSimple(complexity) && facts.byTier.opus.calls > 0) on.add('used_opus_for_simple');
  if (parallelAllowed && facts.parallelOverlaps.some((n) => n < 2)) on.add('sequential_when_parallel_possible');
  if (facts.retries.length >= 2) on.add('multiple_retries');
  if (facts.errorCodes.has('MISSING_CONTEXT')) on.add('missing_context');
  if ([...facts.formatFailures.values()].some((n) => n >= 2)) on.add('unclear_requirements');
  return EFFICIENCY_FACTORS.filter((f) => on.has(f));
}

export interface SummarizeInput extends RunInput {
  /** Verdicts of the run's review nodes; default: read off their reviewEnd events. */
  reviews?: readonly ReviewVerdict[];
  /** The efficiency records of the workflow's direct children, for the `subtree` roll-up. */
  children?: readonly EfficiencyRecord[];
  /**
   * False when the run's allocation ran parallel nodes one step at a time (a routed trivial or
   * simple task): then a sequential parallel node is the rule, not a fault. Default true.
   */
  parallelAllowed?: boolean;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Derivations (every field from the run's own rows, events and reflection history):
 * - task_id: the workflow id; correlation_id: the workflow's; task_type: `task.type`, else
 *   `unspecified`; complexity: classifyComplexity(task, prompt nodes in the tree).
 * - started_at: the workflow's startedAt (createdAt when it never started); completed_at: endedAt.
 * - wall_time_seconds: (endedAt − started) / 1000, millisecond precision.
 * - agents_spawned: agent executions (prompt-node attempts) that sent at least one provider request —
 *   an attempt answered wholly from the cache spawned no agent.
 * - total_agent_calls: agentPromptStart events — logical calls, reflection calls included; cache
 *   hits and calls refused by a limit never start one; a call's transport retries stay one call.
 * - provider_requests: Σ agentPromptEnd.requests — every attempt sent (what maxLlmCalls bounds).
 * - retry_count: transport `retry` events + reflection entries whose decision was `retry`.
 * - retry_reasons: their distinct reasons in order of first occurrence (run-facts.ts maps codes).
 * - recovery_rate: successful retries / retries (null without retries). A transport retry succeeded
 *   when its call recovered (its agentPromptEnd followed, other retries of the call in between); a
 *   reflection retry when the entry's `success` is true.
 * - model_usage / by_model: calls from agentPromptStart, tokens and cost from agentPromptEnd
 *   (tokens_in = inputTokens, tokens_out = outputTokens, est_tokens = in + out); tier by model name.
 * - cache_hits: cacheHit events.
 * - outcome / outcome_reason: outcome.ts, with the review decisions of reviewEnd events; efficiency_score: efficiencyScore; factors: above.
 * - quality_pillars: tool_reliability_rate = tool invocations without isError / invocations;
 *   tool_selection_correct = every invoked tool is in its agent's `tools`; goal_adherence =
 *   completed prompt nodes / prompt nodes that ran (all null when there is nothing to measure);
 *   memory_retrieval_relevant = every retrieval run that retrieved chunks used one of them
 *   (retrieval-relevance.ts; null when no run retrieved anything).
 */
export function summarizeRun(input: SummarizeInput): EfficiencyRecord {
  const { workflow, nodes, endedAt } = input;
  const facts = collectFacts(input);
  const task = workflow.definition.task;
  const complexity = classifyComplexity(task, facts.prompts.size);
  const parallelAllowed = input.parallelAllowed ?? true;
  const startedAt = workflow.startedAt ?? workflow.createdAt;
  const wallTimeSeconds = round(Math.max(0, endedAt - startedAt) / 1000, 3);
  const ranPrompts = nodes.filter((n) => NODE_KINDS[n.type].callsModel && n.attempts > 0);
  const agentsSpawned = facts.agentExecutions;
  const retryCount = facts.retries.length;
  const recovered = facts.retries.filter((r) => r.success).length;
  const reasons = new Set<RetryReason>(facts.retries.map((r) => r.reason));
  const { outcome, outcome_reason } = decideOutcome({
    workflow,
    nodes,
    reflections: input.reflections,
    facts,
    reviews: input.reviews ?? facts.reviews.flatMap((d) => verdictOf(d) ?? []),
  });

  return {
    task_id: workflow.id,
    correlation_id: workflow.correlationId,
    task_type: task?.type ?? 'unspecified',
    complexity,
    started_at: iso(startedAt),
    completed_at: iso(endedAt),
    metrics: {
      wall_time_seconds: wallTimeSeconds,
      agents_spawned: agentsSpawned,
      total_agent_calls: facts.calls,
      provider_requests: facts.requests,
      retry_count: retryCount,
      retry_reasons: [...reasons],
      recovery_rate: retryCount === 0 ? null : round(recovered / retryCount),
      model_usage: facts.byTier,
      by_model: facts.byModel,
      cache_hits: facts.cacheHits,
    },
    outcome,
    outcome_reason,
    efficiency_score: round(efficiencyScore(complexity, { wallTimeSeconds, agentsSpawned, retryCount })),
    efficiency_factors: efficiencyFactors(facts, {
      complexity,
      outcome,
      ranPrompts: ranPrompts.map((n) => n.name),
      parallelAllowed,
    }),
    quality_pillars: {
      tool_selection_correct: facts.toolCalls === 0 ? null : facts.toolMisselections === 0,
      tool_reliability_rate: facts.toolCalls === 0 ? null : round(facts.toolSuccesses / facts.toolCalls),
      memory_retrieval_relevant:
        facts.retrievalRelevance.length === 0 ? null : facts.retrievalRelevance.every((relevant) => relevant),
      goal_adherence:
        ranPrompts.length === 0
          ? null
          : round(ranPrompts.filter((n) => n.status === 'completed').length / ranPrompts.length),
    },
    subtree: subtreeUsage(input.children ?? []),
  };
}
