import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/domain/errors.js';
import type { NodeRecord } from '../../../src/domain/records.js';
import type { ReflectionEntry } from '../../../src/domain/reflection.js';
import { Reopening } from '../../../src/engine/run/reopening.js';
import { manualReflectionRefusal } from '../../../src/reflection/manual.js';
import { node } from '../../support/store-fixtures.js';

/**
 * A reopened workflow decides from stored rows alone (src/engine/run/reopening.ts), so an execution
 * resumed after a crash in the middle of a reopened run decides as the first one did.
 */
const failure = { code: 'VALIDATION_FAILED', message: 'the answer broke the schema' };
const wf = 'wf_test';
const parallel = node(wf, { name: 'both', type: 'parallel', status: 'failed', endedAt: 100, error: failure });
const target = node(wf, {
  name: 'a',
  type: 'prompt',
  parentId: parallel.id,
  status: 'failed',
  attempts: 1,
  endedAt: 100,
  error: failure,
});
const sibling = node(wf, {
  name: 'b',
  type: 'prompt',
  parentId: parallel.id,
  status: 'failed',
  attempts: 1,
  endedAt: 90,
  error: failure,
});
const records = new Map<string, NodeRecord>([parallel, target, sibling].map((r) => [r.id, r]));
const request = { id: 'rr_1', workflowId: wf, nodeId: target.id, reason: null, requestedAt: 200 };

function entry(timestamp: number): ReflectionEntry {
  return {
    id: 'rf_1',
    workflowId: wf,
    tenantId: 't',
    nodeId: target.id,
    nodeName: 'a',
    attempt: 1,
    timestamp,
    level: 'workflow',
    reason: 'retry asked for by hand',
    error: failure,
    resolution: { decision: 'retry' },
    success: null,
  };
}

describe('Reopening', () => {
  it('raises the other failures again and lets the requested node and its containers run', () => {
    const reopening = new Reopening(request, records, []);
    const raised = reopening.finalFailure(sibling);
    expect(raised).toBeInstanceOf(AppError);
    expect(raised).toMatchObject({ code: 'VALIDATION_FAILED', message: failure.message });
    expect(reopening.finalFailure(target)).toBeUndefined();
    expect(reopening.finalFailure(parallel)).toBeUndefined();
    // A failure after the request (a retry pending when the process died) is not final.
    expect(reopening.finalFailure({ ...sibling, endedAt: 250 })).toBeUndefined();
  });

  it('reflects once, and not again after a crash once the entry was recorded', () => {
    const fresh = new Reopening(request, records, []);
    expect(fresh.take(sibling)).toBe(false);
    expect(fresh.take(target)).toBe(true);
    expect(fresh.take(target)).toBe(false);
    expect(new Reopening(request, records, [entry(150)]).take(target)).toBe(true);
    expect(new Reopening(request, records, [entry(200)]).take(target)).toBe(false);
    // Another node's entry since the request is not this reflection.
    const other = { ...entry(250), nodeId: sibling.id };
    expect(new Reopening(request, records, [other]).take(target)).toBe(true);
  });

  it('counts a failure that ended at the very request time as final, and raises no failure it has no error of', () => {
    const reopening = new Reopening(request, records, []);
    expect(reopening.finalFailure({ ...sibling, endedAt: request.requestedAt })).toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    expect(reopening.finalFailure({ ...sibling, error: null })).toBeUndefined();
    // Only a failure is final: a node cancelled before the request, with its error, runs again.
    const cancelled = { code: 'CANCELLED', message: 'cancelled' };
    expect(reopening.finalFailure({ ...sibling, status: 'cancelled', error: cancelled })).toBeUndefined();
  });
});

describe('manualReflectionRefusal', () => {
  const facts = {
    workflow: { status: 'failed' as const, parentWorkflowId: null, cancelRequested: false },
    record: target,
    kindReflects: true,
    requestsForNode: 0,
    maxPerNode: 3,
    requestsSent: 1,
    maxLlmCalls: 10,
  };

  it('accepts a failed prompt of a failed root workflow with budget left', () => {
    expect(manualReflectionRefusal(facts)).toBeUndefined();
  });

  it.each([
    [{ workflow: { ...facts.workflow, parentWorkflowId: 'wf_parent' } }, 'child of wf_parent'],
    [{ workflow: { ...facts.workflow, status: 'completed' as const } }, 'the workflow is completed'],
    [{ workflow: { ...facts.workflow, cancelRequested: true } }, 'the workflow is cancelled'],
    [{ record: parallel, kindReflects: false }, 'is a parallel node'],
    [{ record: { ...target, status: 'completed' as const } }, 'is completed'],
    [
      { record: { ...target, error: { code: 'LLM_AUTHENTICATION', message: 'bad key' } } },
      'LLM_AUTHENTICATION, which reflection cannot fix',
    ],
    [{ requestsForNode: 3 }, 'at most 3'],
    [{ requestsSent: 10 }, 'maxLlmCalls 10'],
  ])('refuses %o', (change, reason) => {
    expect(manualReflectionRefusal({ ...facts, ...change })).toContain(reason);
  });
});
