import { describe, expect, it } from 'vitest';
import { summarizeRun } from '../../../src/metrics/efficiency.js';
import { verdictOf } from '../../../src/metrics/outcome.js';
import { p, par, RunBuilder, seq } from './fixtures.js';

const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };

function outcomeOf(b: RunBuilder, reviews?: Array<'approved' | 'concerns_minor' | 'blocked'>) {
  const r = summarizeRun({ ...b.input(), ...(reviews ? { reviews } : {}) });
  return [r.outcome, r.outcome_reason];
}

describe('outcome and outcome_reason (docs/design.md#events-spans-metrics-and-rewards rules)', () => {
  it('success / spec_validated: completed, nothing checked', () => {
    expect(outcomeOf(new RunBuilder(seq('main', p('a'), p('b'))))).toEqual(['success', 'spec_validated']);
  });

  it('success / tests_passed_first_try: every responseFormat answer valid the first time', () => {
    const b = new RunBuilder(seq('main', p('a', { responseFormat: schema }), p('b')));
    expect(outcomeOf(b)).toEqual(['success', 'tests_passed_first_try']);
  });

  it('success / tests_passed_after_fix: a reflection retry was needed', () => {
    const b = new RunBuilder(seq('main', p('a', { responseFormat: schema })))
      .event('invalidResponse', 'a', { code: 'VALIDATION_FAILED' })
      .reflection('a', { level: 'prompt' });
    expect(outcomeOf(b)).toEqual(['success', 'tests_passed_after_fix']);
  });

  it('success / review_approved outranks tests', () => {
    const b = new RunBuilder(seq('main', p('a', { responseFormat: schema }))).reflection('a');
    expect(outcomeOf(b, ['approved'])).toEqual(['success', 'review_approved']);
  });

  it('partial / tests_partial_pass: completed with a failed optional node', () => {
    const b = new RunBuilder(par('main', p('a'), p('b', { optional: true }))).node('b', {
      status: 'failed',
      error: { code: 'VALIDATION_FAILED', message: 'x' },
    });
    expect(outcomeOf(b)).toEqual(['partial', 'tests_partial_pass']);
  });

  it('partial / review_concerns_minor: minor concerns only', () => {
    expect(outcomeOf(new RunBuilder(p('a')), ['concerns_minor'])).toEqual(['partial', 'review_concerns_minor']);
  });

  it('partial / timeout_partial_work: cancelled after a node completed', () => {
    const b = new RunBuilder(seq('main', p('a'), p('b')), { status: 'cancelled' }).node('b', {
      status: 'cancelled',
    });
    expect(outcomeOf(b)).toEqual(['partial', 'timeout_partial_work']);
  });

  it('partial / timeout_partial_work: timed out after a node completed', () => {
    const b = new RunBuilder(seq('main', p('a'), p('b')), {
      status: 'failed',
      error: { code: 'WORKFLOW_TIMEOUT', message: 'late' },
    }).node('b', { status: 'failed' });
    expect(outcomeOf(b)).toEqual(['partial', 'timeout_partial_work']);
  });

  it('failure / timeout_no_progress: cancelled or timed out before any node completed', () => {
    const cancelled = new RunBuilder(seq('main', p('a')), { status: 'cancelled' })
      .node('main', { status: 'cancelled' })
      .node('a', { status: 'cancelled' });
    expect(outcomeOf(cancelled)).toEqual(['failure', 'timeout_no_progress']);
    const timedOut = new RunBuilder(p('a'), {
      status: 'failed',
      error: { code: 'NODE_TIMEOUT', message: 'late' },
    }).node('a', { status: 'failed' });
    expect(outcomeOf(timedOut)).toEqual(['failure', 'timeout_no_progress']);
  });

  it.each(['VALIDATION_FAILED', 'INVALID_RESPONSE_FORMAT'])('failure / tests_failed on %s', (code) => {
    const b = new RunBuilder(p('a'), { status: 'failed', error: { code, message: 'bad' } }).node('a', {
      status: 'failed',
    });
    expect(outcomeOf(b)).toEqual(['failure', 'tests_failed']);
  });

  it('reads the review decisions off reviewEnd events (the last per node; a skipped review decides nothing)', () => {
    const end = (decision: string) => ({
      node: 'r',
      attempt: 1,
      mode: 'standard',
      decision,
      approvals: 2,
      rejections: 1,
    });
    const approved = new RunBuilder(seq('main', p('a'))).event('reviewEnd', 'a', end('review_approved'));
    expect(outcomeOf(approved)).toEqual(['success', 'review_approved']);
    const minor = new RunBuilder(seq('main', p('a'))).event('reviewEnd', 'a', end('review_concerns_minor'));
    expect(outcomeOf(minor)).toEqual(['partial', 'review_concerns_minor']);
    const skipped = new RunBuilder(seq('main', p('a'))).event('reviewEnd', 'a', end('review_skipped'));
    expect(outcomeOf(skipped)).toEqual(['success', 'spec_validated']);
  });

  it('failure / review_blocked by the REVIEW_BLOCKED code', () => {
    const b = new RunBuilder(p('a'), { status: 'failed', error: { code: 'REVIEW_BLOCKED', message: 'x' } });
    expect(outcomeOf(b)).toEqual(['failure', 'review_blocked']);
  });

  it('failure / review_blocked', () => {
    const b = new RunBuilder(p('a'), { status: 'failed', error: { code: 'INTERNAL', message: 'x' } });
    expect(outcomeOf(b, ['blocked'])).toEqual(['failure', 'review_blocked']);
  });

  it.each([
    'UNKNOWN_MODEL',
    'UNKNOWN_TOOL',
    'PROVIDER_NOT_CONFIGURED',
    'LLM_AUTHENTICATION',
    'LLM_PERMISSION',
    'LLM_QUOTA',
    'MISSING_CONTEXT',
  ])('failure / dependency_missing on %s', (code) => {
    const b = new RunBuilder(p('a'), { status: 'failed', error: { code, message: 'x' } }).node('a', {
      status: 'failed',
    });
    expect(outcomeOf(b)).toEqual(['failure', 'dependency_missing']);
  });

  it.each(['LLM_SERVER_ERROR', 'MAX_TURNS_EXCEEDED', 'INTERNAL', 'CHILD_WORKFLOW_FAILED'])(
    'failure / error_unrecoverable on %s',
    (code) => {
      const b = new RunBuilder(p('a'), { status: 'failed', error: { code, message: 'x' } });
      expect(outcomeOf(b)).toEqual(['failure', 'error_unrecoverable']);
    },
  );

  it('refuses a workflow that is not terminal', () => {
    expect(() => summarizeRun(new RunBuilder(p('a'), { status: 'running' }).input())).toThrow(/terminal/);
  });
});

describe('a review decision as the outcome rules read it', () => {
  it('approved, minor concerns and blocked are verdicts; a skipped review is none', () => {
    expect(
      (['review_approved', 'review_concerns_minor', 'review_blocked', 'review_skipped'] as const).map(verdictOf),
    ).toEqual(['approved', 'concerns_minor', 'blocked', undefined]);
  });
});
