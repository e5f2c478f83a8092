import { agentNameOf, DEFAULTS, type PromptNode, type ReviewMode, type ReviewNode } from '../../domain/definition.js';
import { AppError } from '../../domain/errors.js';
import {
  REVIEWER_ANSWER_JSON_SCHEMA,
  ReviewerAnswerSchema,
  type ReviewerVerdict,
  type ReviewOutput,
} from '../../domain/review.js';
import { COMPLEXITY_ALLOCATIONS, REVIEWER_TIER, reviewPanel } from '../../routing/allocation.js';
import { decideReview } from '../../routing/review.js';
import { isShutdown } from '../errors.js';
import type { CheckContext, NodeAttempt, NodeContext, NodeHandler } from '../node-context.js';
import { converse } from './prompt/conversation.js';
import { instructionsHash } from './prompt/prompt.js';
import { preparePrompt } from './prompt/request.js';
import { buildUserMessage } from './user-message.js';

/**
 * `review` (docs/design.md#complexity-allocation-selection-and-review): a panel of reviewers judges an earlier step's
 * output. The panel is the
 * allocation's (`mode`, default: the review mode at the task's complexity): single = 1, standard = 3
 * in parallel, deep = 3 + a devil's advocate, exhaustive = deep twice, the second round seeing the
 * first round's concerns; skip completes at once without a call. Each reviewer is one conversation
 * of the node's agent through the model gateway (cache, budget, slots, spans), answering the
 * verdict schema `{approved, concerns[], severity}`. The decision rule is routing/review.ts; a
 * blocked review fails the node with REVIEW_BLOCKED (its parent goes on when it is `optional`).
 * Durable like a prompt: the verdicts were paid for.
 */
export const reviewHandler: NodeHandler<ReviewNode> = {
  durable: true,

  async run(ctx, node, at) {
    const mode = node.mode ?? COMPLEXITY_ALLOCATIONS[ctx.view.complexity].review;
    const span = {
      type: 'custom_span' as const,
      parentId: at.parentSpan,
      nodeId: at.record.id,
      fields: {
        operation_name: 'review',
        metadata: { node: node.name, target: node.target, mode, attempt: at.attempt },
      },
    };
    const output = await ctx.journal.withSpan(span, (spanId) => runPanel(ctx, node, at, mode, spanId));
    ctx.journal.emit(at.record.id, {
      type: 'reviewEnd',
      payload: {
        node: node.name,
        attempt: at.attempt,
        mode,
        decision: output.decision,
        approvals: output.approvals,
        rejections: output.rejections,
      },
    });
    if (output.decision === 'review_blocked') throw blocked(node, output);
    return output;
  },

  check: checkReview,

  redact(node, redactor) {
    if (node.instructions === undefined) return node;
    const instructions = redactor.text(node.instructions);
    return instructions === node.instructions ? node : { ...node, instructions };
  },
};

interface Seat {
  reviewer: number;
  of: number;
  round: number;
  rounds: number;
  devilsAdvocate: boolean;
  /** The verdicts of the round before (exhaustive mode's second round). */
  previous: readonly ReviewerVerdict[];
}

async function runPanel(
  ctx: NodeContext,
  node: ReviewNode,
  at: NodeAttempt,
  mode: ReviewMode,
  spanId: string,
): Promise<ReviewOutput> {
  const panel = reviewPanel(mode);
  const verdicts: ReviewerVerdict[] = [];
  if (panel.rounds === 0) return { decision: 'review_skipped', mode, verdicts, approvals: 0, rejections: 0 };
  const timeoutMs = node.timeoutMs ?? DEFAULTS.nodeTimeoutMs;
  const deadline = ctx.deadlines.within(
    at.signal,
    timeoutMs,
    () => new AppError('NODE_TIMEOUT', `review "${node.name}" did not finish within ${timeoutMs} ms`),
  );
  const within = { ...at, signal: deadline.signal };
  const cacheKeys: string[] = [];
  try {
    const seats = panel.reviewers + (panel.devilsAdvocate ? 1 : 0);
    for (let round = 1; round <= panel.rounds; round++) {
      const previous = verdicts.filter((v) => v.round === round - 1);
      const asked = Array.from({ length: seats }, (_, i) =>
        askReviewer(ctx, node, within, spanId, cacheKeys, {
          reviewer: i + 1,
          of: seats,
          round,
          rounds: panel.rounds,
          devilsAdvocate: panel.devilsAdvocate && i === seats - 1,
          previous,
        }),
      );
      // Every reviewer settles before the round decides: none is left running unrecorded.
      const results = await Promise.allSettled(asked);
      const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      const shutdown = failures.find((f) => isShutdown(f.reason));
      if (shutdown) throw shutdown.reason;
      if (failures[0]) throw failures[0].reason;
      for (const r of results) verdicts.push((r as PromiseFulfilledResult<ReviewerVerdict>).value);
    }
  } finally {
    deadline.dispose();
  }
  return { ...decideReview(verdicts), mode, verdicts };
}

async function askReviewer(
  ctx: NodeContext,
  node: ReviewNode,
  at: NodeAttempt,
  reviewSpan: string,
  cacheKeys: string[],
  seat: Seat,
): Promise<ReviewerVerdict> {
  const agentName = agentNameOf(node);
  const agent = ctx.view.agent(agentName);
  if (!agent) throw new AppError('MISSING_CONTEXT', `agent "${agentName}" is not defined`);
  const prompt: PromptNode = {
    type: 'prompt',
    name: node.name,
    agent: agentName,
    user: reviewerText(node, seat),
    // The target's output goes in as data through the step-output template: the raw value, never re-rendered.
    data: { output: `{{steps.${node.target}.output}}` },
    responseFormat: REVIEWER_ANSWER_JSON_SCHEMA,
    ...(node.timeoutMs === undefined ? {} : { timeoutMs: node.timeoutMs }),
    // "Sonnet for reviews" (docs/design.md#complexity-allocation-selection-and-review): the reviewer tier unless the
    // agent names its model.
    ...(agent.model === undefined || agent.model === 'auto' ? { overrides: { model: REVIEWER_TIER } } : {}),
  };
  const prepared = preparePrompt(ctx.view, ctx, prompt);
  if (seat.previous.length > 0) {
    // Model-written text: added after rendering, so a `{{…}}` in a concern is text, not a template.
    const previous = seat.previous.map(({ reviewer, devilsAdvocate, approved, severity, concerns }) => ({
      reviewer,
      devilsAdvocate,
      approved,
      severity,
      concerns,
    }));
    prepared.user = buildUserMessage(prepared.user, { previous_round_concerns: previous });
    prepared.request.messages = [{ role: 'user', content: prepared.user }];
  }
  const context = { node: node.name, reviewer: seat.reviewer, round: seat.round, devilsAdvocate: seat.devilsAdvocate };
  ctx.journal.recordSpan({
    type: 'handoff_span',
    parentId: reviewSpan,
    nodeId: at.record.id,
    fields: {
      from_agent: 'orchestrator',
      to_agent: agentName,
      context_passed: { ...context, attempt: at.attempt },
      // Settled at submission (agent-resolution.ts), as for a prompt: the registry version and the selection.
      ...(node.resolved?.version === undefined ? {} : { agent_version: node.resolved.version }),
      ...(node.resolved?.selection === undefined ? {} : { selection: node.resolved.selection }),
    },
  });
  const agentSpan = {
    type: 'agent_span' as const,
    parentId: reviewSpan,
    nodeId: at.record.id,
    fields: {
      agent_name: agentName,
      model: prepared.model.id,
      instructions_hash: prepared.request.system === undefined ? null : instructionsHash(prepared.request.system),
    },
  };
  // Each reviewer is an agent: a routed workflow's `max_agents` bounds them like prompts.
  const value = await ctx.agents.run(at.signal, () =>
    ctx.journal.withSpan(agentSpan, (spanId) =>
      // Each seat's conversation commits its own turns (a crash resumes each where it stood).
      converse(ctx, prompt, at, prepared, spanId, cacheKeys, `review round ${seat.round} seat ${seat.reviewer}`),
    ),
  );
  // ajv checked the answer against the same shape; zod gives it its type.
  const answer = ReviewerAnswerSchema.parse(value);
  const verdict: ReviewerVerdict = {
    reviewer: seat.reviewer,
    round: seat.round,
    devilsAdvocate: seat.devilsAdvocate,
    ...answer,
  };
  ctx.journal.emit(at.record.id, {
    type: 'reviewVerdict',
    payload: { node: node.name, attempt: at.attempt, agent: agentName, model: prepared.model.id, ...verdict },
  });
  return verdict;
}

/** The reviewer's task. Distinct per seat, so the panel's calls are distinct requests (not one collapsed call). */
function reviewerText(node: ReviewNode, seat: Seat): string {
  const lines = [
    `You are reviewer ${seat.reviewer} of ${seat.of} on a review panel (round ${seat.round} of ${seat.rounds}). ` +
      `Review the output of the step "${node.target}", given below in <output>, and decide whether it may go ahead ` +
      'as it is. Answer with your verdict: whether you approve, every concern you found (one sentence each), and ' +
      'the severity of the worst one (none, minor, major, critical).',
  ];
  if (node.instructions !== undefined) lines.push(node.instructions);
  if (seat.devilsAdvocate) {
    lines.push(
      "You are the devil's advocate: argue against approval. Look hard for the strongest reasons this output should " +
        'not be accepted and list them as concerns. Your vote is not counted, but a rejection you rate critical ' +
        'blocks the review, so rate severity honestly: critical only for a flaw that must not ship.',
    );
  }
  if (seat.previous.length > 0) {
    lines.push(
      "The previous round's verdicts are in <previous_round_concerns>: check whether each concern holds, and " +
        'judge the output again with them in mind.',
    );
  }
  return lines.join('\n\n');
}

function blocked(node: ReviewNode, output: ReviewOutput): AppError {
  const concerns = output.verdicts
    .filter((v) => v.round === output.verdicts.at(-1)?.round && v.concerns.length > 0)
    .flatMap((v) => v.concerns.map((c) => `[${v.severity}] ${c}`));
  const shown = concerns.slice(0, 5).map((c) => (c.length > 200 ? `${c.slice(0, 200)}…` : c));
  const more = concerns.length > shown.length ? ` (and ${concerns.length - shown.length} more)` : '';
  return new AppError(
    'REVIEW_BLOCKED',
    `review "${node.name}" of "${node.target}" blocked: ${output.approvals} approval(s), ${output.rejections} ` +
      `rejection(s)${shown.length > 0 ? `; concerns: ${shown.join('; ')}${more}` : ''}`,
  );
}

/**
 * docs/design.md#complexity-allocation-selection-and-review: the reviewers judge the output of a
 * step that completes before the review.
 */
function checkReview(node: ReviewNode, c: CheckContext): void {
  const name = agentNameOf(node);
  const agent = c.agent(name);
  if (!agent) c.issue(`${c.path}.agent`, `unknown agent "${name}"`);
  else c.templates(agent.system, `agents.${name}.system`);
  const target = c.step(node.target);
  if (target !== 'before') {
    const why =
      node.target === node.name
        ? 'is this review itself'
        : target === 'later'
          ? 'does not complete before this node'
          : 'is not a node of this workflow';
    c.issue(`${c.path}.target`, `step "${node.target}" ${why}`);
  }
  c.templates(node.instructions, `${c.path}.instructions`);
}
