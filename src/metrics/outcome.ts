import { NODE_KINDS } from '../domain/definition.js';
import { meaningOf } from '../domain/errors.js';
import type { Outcome, OutcomeReason } from '../domain/metrics.js';
import type { NodeRecord, WorkflowRecord } from '../domain/records.js';
import type { ReflectionEntry } from '../domain/reflection.js';
import type { ReviewDecision } from '../domain/review.js';
import { isFormatError, type RunFacts } from './run-facts.js';

/**
 * Outcome and outcome_reason (docs/design.md#events-spans-metrics-and-rewards), first matching rule wins:
 *
 * completed
 *   1. a node failed (only optional nodes can fail in a completed run) → partial  tests_partial_pass
 *   2. a review raised minor concerns only                             → partial  review_concerns_minor
 *   3. a review approved                                               → success  review_approved
 *   4. a reflection retry was needed (decision `retry`)                → success  tests_passed_after_fix
 *   5. ≥ 1 prompt that ran had a responseFormat, and every answer
 *      satisfied it the first time (no invalidResponse, no format error)→ success  tests_passed_first_try
 *   6. otherwise                                                       → success  spec_validated
 * cancelled
 *   a prompt or child-workflow node had completed → partial timeout_partial_work, else failure
 *   timeout_no_progress
 * failed, by the workflow's error code
 *   - a review blocked                                                 → review_blocked
 *   - VALIDATION_FAILED, INVALID_RESPONSE_FORMAT                       → tests_failed
 *   - UNKNOWN_MODEL/TOOL/AGENT, PROVIDER_NOT_CONFIGURED,
 *     LLM_AUTHENTICATION, LLM_PERMISSION, LLM_QUOTA (unknown agent/
 *     model/tool, missing or unusable key), MISSING_CONTEXT (a template
 *     input that no step produced; reflection/policy.ts files it the same) → dependency_missing
 *   - WORKFLOW_TIMEOUT, NODE_TIMEOUT: like cancelled (partial work or no progress)
 *   - anything else                                                    → error_unrecoverable
 *
 * `reviews` are the decisions of the run's review nodes (their reviewEnd events; a skipped review
 * decides nothing). A required review that blocked fails its workflow with REVIEW_BLOCKED, whose
 * outcome in ERROR_CODES is review_blocked; an optional one that blocked leaves a failed node, rule 1.
 * Only an approving review reaches `review_approved`, the one reason rewards.ts scores 1.0.
 */

export type ReviewVerdict = 'approved' | 'concerns_minor' | 'blocked';

/** A review node's decision as the outcome rules read it; undefined for a skipped review. */
export function verdictOf(decision: ReviewDecision): ReviewVerdict | undefined {
  switch (decision) {
    case 'review_approved':
      return 'approved';
    case 'review_concerns_minor':
      return 'concerns_minor';
    case 'review_blocked':
      return 'blocked';
    case 'review_skipped':
      return undefined;
  }
}

export interface OutcomeInput {
  workflow: WorkflowRecord;
  nodes: readonly NodeRecord[];
  reflections: readonly ReflectionEntry[];
  facts: RunFacts;
  /** One verdict per review node that finished. */
  reviews?: readonly ReviewVerdict[];
}

export interface OutcomeDecision {
  outcome: Outcome;
  outcome_reason: OutcomeReason;
}

const decision = (outcome: Outcome, outcome_reason: OutcomeReason): OutcomeDecision => ({ outcome, outcome_reason });

function madeProgress(nodes: readonly NodeRecord[]): boolean {
  return nodes.some(
    (n) => (NODE_KINDS[n.type].callsModel || NODE_KINDS[n.type].startsChild) && n.status === 'completed',
  );
}

function interrupted(nodes: readonly NodeRecord[]): OutcomeDecision {
  return madeProgress(nodes) ? decision('partial', 'timeout_partial_work') : decision('failure', 'timeout_no_progress');
}

function completedOutcome(input: OutcomeInput): OutcomeDecision {
  const { nodes, reflections, facts } = input;
  const reviews = input.reviews ?? [];
  if (nodes.some((n) => n.status === 'failed')) return decision('partial', 'tests_partial_pass');
  if (reviews.includes('concerns_minor') && !reviews.includes('approved')) {
    return decision('partial', 'review_concerns_minor');
  }
  if (reviews.includes('approved')) return decision('success', 'review_approved');
  if (reflections.some((r) => r.resolution.decision === 'retry')) return decision('success', 'tests_passed_after_fix');
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const checked = [...facts.prompts.values()].some(
    (p) => p.responseFormat !== undefined && (byName.get(p.name)?.attempts ?? 0) > 0,
  );
  const formatFailed = facts.formatFailures.size > 0 || reflections.some((r) => isFormatError(r.error.code));
  if (checked && !formatFailed) return decision('success', 'tests_passed_first_try');
  return decision('success', 'spec_validated');
}

function failedOutcome(input: OutcomeInput): OutcomeDecision {
  const code = input.workflow.error?.code ?? 'INTERNAL';
  if ((input.reviews ?? []).includes('blocked')) return decision('failure', 'review_blocked');
  // What the code means for an outcome is ERROR_CODES' `outcome`.
  switch (meaningOf(code).outcome) {
    case 'tests_failed':
      return decision('failure', 'tests_failed');
    case 'dependency_missing':
      return decision('failure', 'dependency_missing');
    case 'review_blocked':
      return decision('failure', 'review_blocked');
    case 'timeout':
      return interrupted(input.nodes);
    default:
      return decision('failure', 'error_unrecoverable');
  }
}

export function decideOutcome(input: OutcomeInput): OutcomeDecision {
  switch (input.workflow.status) {
    case 'completed':
      return completedOutcome(input);
    case 'cancelled':
      return interrupted(input.nodes);
    case 'failed':
      return failedOutcome(input);
    default:
      throw new Error(`workflow ${input.workflow.id} is ${input.workflow.status}: outcomes are for terminal runs`);
  }
}
