import { z } from 'zod';
import type { ReviewMode } from './definition.js';
import type { JsonSchema } from './llm.js';

/**
 * What a review node's reviewers answer and what the node decides
 * (docs/design.md#complexity-allocation-selection-and-review). The decision rule
 * itself is policy (src/routing/review.ts); these are the shapes events, outputs and metrics share.
 */

export const REVIEW_SEVERITIES = ['none', 'minor', 'major', 'critical'] as const;
export type ReviewSeverity = (typeof REVIEW_SEVERITIES)[number];

/** One reviewer's answer, as the model must give it (the JSON Schema below says the same to the model). */
export const ReviewerAnswerSchema = z.strictObject({
  approved: z.boolean(),
  concerns: z.array(z.string().max(10_000)).max(50),
  severity: z.enum(REVIEW_SEVERITIES),
});

/** The responseFormat every reviewer call carries: one shared object, so it is compiled once. */
export const REVIEWER_ANSWER_JSON_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['approved', 'concerns', 'severity'],
  properties: {
    approved: { type: 'boolean', description: 'Whether the work may go ahead as it is.' },
    concerns: {
      type: 'array',
      maxItems: 50,
      items: { type: 'string', maxLength: 10_000 },
      description: 'Each problem found, one sentence each; empty when there is none.',
    },
    severity: {
      enum: [...REVIEW_SEVERITIES],
      description:
        'The worst of the concerns: none, minor (cosmetic), major (should be fixed), critical (must not ship).',
    },
  },
};

/** One reviewer's verdict in a review node's output and its reviewVerdict event. */
export const ReviewerVerdictSchema = ReviewerAnswerSchema.extend({
  reviewer: z.int().min(1).describe("1-based position in its round; the devil's advocate comes last."),
  round: z.int().min(1),
  devilsAdvocate: z.boolean().describe('Told to argue against approval; its vote is not counted.'),
});
export type ReviewerVerdict = z.infer<typeof ReviewerVerdictSchema>;

export const REVIEW_DECISIONS = [
  'review_approved',
  'review_concerns_minor',
  'review_blocked',
  'review_skipped',
] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];

/** A review node's output. */
export interface ReviewOutput {
  decision: ReviewDecision;
  mode: ReviewMode;
  verdicts: ReviewerVerdict[];
  /** Counted votes of the deciding (last) round: regular reviewers only. */
  approvals: number;
  rejections: number;
}
