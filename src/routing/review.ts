import type { ReviewDecision, ReviewerVerdict } from '../domain/review.js';

/**
 * The decision of a review node (docs/design.md#complexity-allocation-selection-and-review), from the verdicts of its
 * rounds. Written down once:
 *
 * 1. The last round decides (exhaustive: round 2, whose reviewers saw round 1's concerns); the
 *    earlier round's verdicts are kept in the output but do not vote.
 * 2. Votes are the regular reviewers' `approved`. The devil's advocate is told to argue against
 *    approval, so its vote is NOT counted (counting it would turn 2 of 3 approvals into a 2–2 tie).
 * 3. Fewer than a strict majority of votes approve            → review_blocked.
 * 4. Any rejecting verdict of severity `critical` (the devil's advocate's included)
 *    vetoes the majority                                      → review_blocked.
 * 5. An approving verdict of severity `major` or `critical`   → review_blocked (it approved with a
 *    concern it rates as blocking: the conservative reading).
 * 6. Approving verdicts raised concerns, all `none`/`minor`   → review_concerns_minor.
 * 7. Otherwise                                                → review_approved.
 *
 * Concerns of an outvoted (non-critical) rejection are recorded, not decisive: the majority approved.
 */
export interface ReviewTally {
  decision: Exclude<ReviewDecision, 'review_skipped'>;
  approvals: number;
  rejections: number;
}

export function decideReview(verdicts: readonly ReviewerVerdict[]): ReviewTally {
  const lastRound = Math.max(0, ...verdicts.map((v) => v.round));
  const round = verdicts.filter((v) => v.round === lastRound);
  const voters = round.filter((v) => !v.devilsAdvocate);
  const approvals = voters.filter((v) => v.approved).length;
  const rejections = voters.length - approvals;
  const tally = (decision: ReviewTally['decision']): ReviewTally => ({ decision, approvals, rejections });

  // Stryker disable next-line ConditionalExpression: with no voters, 0 approvals × 2 <= 0 blocks as well
  if (voters.length === 0 || approvals * 2 <= voters.length) return tally('review_blocked');
  if (round.some((v) => !v.approved && v.severity === 'critical')) return tally('review_blocked');
  const approving = voters.filter((v) => v.approved);
  if (approving.some((v) => v.severity === 'major' || v.severity === 'critical')) return tally('review_blocked');
  if (approving.some((v) => v.concerns.length > 0 || v.severity === 'minor')) return tally('review_concerns_minor');
  return tally('review_approved');
}
