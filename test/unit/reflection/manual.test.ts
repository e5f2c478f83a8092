import { describe, expect, it } from 'vitest';
import type { NodeRecord } from '../../../src/domain/records.js';
import { type ManualReflectionFacts, manualReflectionRefusal } from '../../../src/reflection/manual.js';

/**
 * When a reflection asked for by hand is refused (docs/workflows.md#reflection), and the reason the
 * 409 gives: each rule on its own, first rule first, and no refusal when every fact allows it.
 */
const node = (extra: Partial<NodeRecord> = {}): NodeRecord =>
  ({
    id: 'nd_1',
    name: 'rate',
    type: 'prompt',
    status: 'failed',
    error: { code: 'VALIDATION_FAILED', message: 'bad answer' },
    ...extra,
  }) as NodeRecord;

const allowed: ManualReflectionFacts = {
  workflow: { status: 'failed', parentWorkflowId: null, cancelRequested: false },
  record: node(),
  kindReflects: true,
  requestsForNode: 0,
  maxPerNode: 3,
  requestsSent: 4,
  maxLlmCalls: 5,
};

const refusal = (facts: Partial<ManualReflectionFacts>) => manualReflectionRefusal({ ...allowed, ...facts });

describe('manualReflectionRefusal', () => {
  it('allows a failed prompt node of a failed root with attempts and requests left', () => {
    expect(refusal({})).toBeUndefined();
  });

  it.each<[string, Partial<ManualReflectionFacts>, string]>([
    [
      'a child workflow',
      { workflow: { status: 'failed', parentWorkflowId: 'wf_p', cancelRequested: false } },
      'workflow is a child of wf_p: reflection by hand reopens a root workflow',
    ],
    [
      'a completed workflow',
      { workflow: { status: 'completed', parentWorkflowId: null, cancelRequested: false } },
      'the workflow is completed: only a failed workflow is reopened',
    ],
    [
      'a cancelled one',
      { workflow: { status: 'failed', parentWorkflowId: null, cancelRequested: true } },
      'the workflow is cancelled: only a failed workflow is reopened',
    ],
    [
      'a node kind that cannot reflect',
      { kindReflects: false, record: node({ type: 'sequence' } as Partial<NodeRecord>) },
      'node "rate" is a sequence node: only prompt nodes reflect',
    ],
    [
      'a node that did not fail',
      { record: node({ status: 'completed', error: null }) },
      'node "rate" is completed: only a failed node is reflected on',
    ],
    [
      'a failure reflection cannot fix',
      { record: node({ error: { code: 'LLM_CALL_LIMIT_EXCEEDED', message: 'cap' } }) },
      'node "rate" failed with LLM_CALL_LIMIT_EXCEEDED, which reflection cannot fix',
    ],
    [
      'a failure with no error recorded',
      { record: node({ error: null }) },
      'node "rate" failed with no error, which reflection cannot fix',
    ],
    [
      'a node out of hand reflections',
      { requestsForNode: 3 },
      'node "rate" already had 3 reflections asked by hand (at most 3, options.reflection.maxAttempts)',
    ],
    [
      'a workflow out of provider requests',
      { requestsSent: 5 },
      'the workflow has sent 5 provider requests of its maxLlmCalls 5',
    ],
  ])('refuses %s', (_what, facts, reason) => {
    expect(refusal(facts)).toBe(reason);
  });
});
