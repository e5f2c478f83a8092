import { describe, expect, it } from 'vitest';
import type { ReviewerVerdict, ReviewSeverity } from '../../../src/domain/review.js';
import { decideReview } from '../../../src/routing/review.js';

/**
 * The review decision rule (docs/design.md#complexity-allocation-selection-and-review; written down in
 * src/routing/review.ts).
 */

let seat = 0;
function v(
  approved: boolean,
  severity: ReviewSeverity = 'none',
  extra: Partial<ReviewerVerdict> = {},
): ReviewerVerdict {
  const concerns = severity === 'none' ? [] : [`a ${severity} concern`];
  return { reviewer: ++seat, round: 1, devilsAdvocate: false, approved, concerns, severity, ...extra };
}
const devil = (approved: boolean, severity: ReviewSeverity, round = 1) =>
  v(approved, severity, { devilsAdvocate: true, round });

describe('decideReview', () => {
  it('majority approval without concerns → review_approved; the outvoted rejection is recorded, not decisive', () => {
    expect(decideReview([v(true), v(false, 'major'), v(true)])).toEqual({
      decision: 'review_approved',
      approvals: 2,
      rejections: 1,
    });
  });

  it('no strict majority → review_blocked (1 of 3, and a single reviewer who rejects)', () => {
    expect(decideReview([v(true), v(false, 'major'), v(false, 'minor')]).decision).toBe('review_blocked');
    expect(decideReview([v(false, 'minor')])).toEqual({ decision: 'review_blocked', approvals: 0, rejections: 1 });
    expect(decideReview([v(true)]).decision).toBe('review_approved');
  });

  it('approving reviewers with minor concerns only → review_concerns_minor', () => {
    expect(decideReview([v(true, 'minor'), v(true), v(false, 'major')]).decision).toBe('review_concerns_minor');
    // A concern listed with severity "none" is still a concern.
    expect(decideReview([v(true, 'none', { concerns: ['naming'] })]).decision).toBe('review_concerns_minor');
  });

  it('an approval rated major or critical blocks (approved with a blocking concern: the conservative reading)', () => {
    expect(decideReview([v(true, 'major'), v(true), v(true)]).decision).toBe('review_blocked');
    expect(decideReview([v(true, 'critical'), v(true), v(true)]).decision).toBe('review_blocked');
  });

  it('a tie is no strict majority; an approval rated minor without listed concerns is still minor', () => {
    expect(decideReview([v(true), v(true), v(false, 'minor'), v(false, 'minor')]).decision).toBe('review_blocked');
    expect(decideReview([v(true, 'minor', { concerns: [] }), v(true)]).decision).toBe('review_concerns_minor');
  });

  it("the devil's advocate's vote is not counted: 2 of 3 approving stays a majority against its rejection", () => {
    expect(decideReview([v(true), v(true), v(false, 'major'), devil(false, 'major')])).toEqual({
      decision: 'review_approved',
      approvals: 2,
      rejections: 1,
    });
    // Nor does its approval rescue a panel that rejected.
    expect(decideReview([v(false, 'major'), v(false, 'major'), v(true), devil(true, 'none')]).decision).toBe(
      'review_blocked',
    );
  });

  it("a critical rejection vetoes the majority, the devil's advocate's included", () => {
    expect(decideReview([v(true), v(true), v(true), devil(false, 'critical')]).decision).toBe('review_blocked');
    expect(decideReview([v(true), v(true), v(false, 'critical')]).decision).toBe('review_blocked');
  });

  it('exhaustive: the last round decides, the first only informs it', () => {
    const round1 = [v(false, 'major'), v(false, 'major'), v(true), devil(false, 'major')];
    const round2 = [v(true), v(true), v(true), devil(false, 'minor', 2)].map((x) => ({ ...x, round: 2 }));
    expect(decideReview([...round1, ...round2])).toEqual({ decision: 'review_approved', approvals: 3, rejections: 0 });
    const blockedLater = [v(true), v(true), v(true)].concat(
      [v(false, 'major'), v(false, 'major'), v(true)].map((x) => ({ ...x, round: 2 })),
    );
    expect(decideReview(blockedLater).decision).toBe('review_blocked');
  });

  it('no verdict at all decides nothing good', () => {
    expect(decideReview([]).decision).toBe('review_blocked');
  });
});
