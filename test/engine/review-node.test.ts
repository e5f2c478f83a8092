import { describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/domain/llm.js';
import { COMPLEXITIES } from '../../src/domain/task.js';
import { COMPLEXITY_ALLOCATIONS, reviewPanel } from '../../src/routing/allocation.js';
import { useEngineHarness } from '../support/engine-harness.js';

/**
 * The review node in process (docs/design.md#complexity-allocation-selection-and-review): panel sizes, modes, rounds,
 * and what reviewers are told.
 */

const h = useEngineHarness({
  env: { MODEL_TIERS: JSON.stringify({ haiku: 'script/haiku', sonnet: 'script/sonnet', opus: 'script/opus' }) },
});

const approve = { json: { approved: true, concerns: [] as string[], severity: 'none' } };
const rejectMajor = { json: { approved: false, concerns: ['the fix drops the error path'], severity: 'major' } };

function flow(review: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    name: 'review-flow',
    // The reviewer names no model: reviews run on the reviewer tier (sonnet → script/sonnet).
    agents: { dev: { model: 'script/dev' }, reviewer: { system: 'You review.' } },
    root: {
      type: 'sequence',
      name: 'main',
      steps: [
        { type: 'prompt', name: 'work', agent: 'dev', user: 'Write it' },
        { type: 'review', name: 'check', agent: 'reviewer', target: 'work', ...review },
      ],
    },
    options: { cache: false },
    ...extra,
  };
}

const text = (request: LlmRequest) => JSON.stringify(request.messages);
const reviewCalls = () => h.model.calls.filter((c) => c.request.model !== 'dev');

describe('review node', () => {
  it('skip completes at once without a call, deciding review_skipped', async () => {
    h.model.enqueue({ text: 'done' });
    const id = await h.submit(flow({ mode: 'skip' }));
    const { workflow, events } = await h.untilEnd(id);
    expect(workflow.status).toBe('completed');
    expect(h.model.calls).toHaveLength(1);
    expect(workflow.output).toEqual({
      decision: 'review_skipped',
      mode: 'skip',
      verdicts: [],
      approvals: 0,
      rejections: 0,
    });
    expect(events.find((e) => e.type === 'reviewEnd')?.payload).toMatchObject({ decision: 'review_skipped' });
  });

  it.each(COMPLEXITIES)('without a mode, reviews as the allocation says at complexity %s', async (complexity) => {
    const mode = COMPLEXITY_ALLOCATIONS[complexity].review;
    const panel = reviewPanel(mode);
    const calls = (panel.reviewers + (panel.devilsAdvocate ? 1 : 0)) * panel.rounds;
    h.model.enqueue({ text: 'done' }, ...Array.from({ length: calls }, () => approve));
    const id = await h.submit(flow({}, { task: { type: 'code_review', complexity } }));
    // A critical task waits for a person first (docs/design.md#complexity-allocation-selection-and-review).
    if (complexity === 'critical') await h.approve(id);
    const { workflow } = await h.untilEnd(id);
    expect(workflow.status).toBe('completed');
    expect(workflow.output).toMatchObject({ mode, decision: mode === 'skip' ? 'review_skipped' : 'review_approved' });
    expect(reviewCalls()).toHaveLength(calls);
    // Reviewers run on the reviewer tier, and the panel's requests are distinct (none collapsed into another).
    for (const call of reviewCalls()) expect(call.request.model).toBe('sonnet');
    expect(new Set(reviewCalls().map((c) => text(c.request))).size).toBe(calls);
  });

  it("deep: three reviewers and a devil's advocate, in parallel; the advocate is told to argue against", async () => {
    const slow = (reply: typeof approve) => ({ ...reply, latencyMs: 1_000 });
    h.model.enqueue({ text: 'done' }, slow(approve), slow(approve), slow(rejectMajor), slow(rejectMajor));
    const id = await h.submit(flow({ mode: 'deep' }));
    const { workflow, events } = await h.runUntilEnd(id);
    expect(workflow.status).toBe('completed');
    expect(workflow.output).toMatchObject({ decision: 'review_approved', approvals: 2, rejections: 1 });
    const calls = reviewCalls();
    // All four were in flight together: each took 1 s, and the four together took 1 s.
    expect(new Set(calls.map((c) => c.receivedAt)).size).toBe(1);
    expect(calls.map((c) => (c.settledAt ?? 0) - c.receivedAt)).toEqual([1_000, 1_000, 1_000, 1_000]);
    const advocates = calls.filter((c) => text(c.request).includes("devil's advocate"));
    expect(advocates).toHaveLength(1);
    expect(text(advocates[0]?.request as LlmRequest)).toContain('argue against approval');
    const verdicts = events.filter((e) => e.type === 'reviewVerdict').map((e) => e.payload);
    expect(verdicts.map((p) => p.devilsAdvocate)).toEqual([false, false, false, true]);
    // The target's output reached every reviewer as data.
    for (const call of calls) expect(text(call.request)).toContain('<output>\\n\\"done\\"\\n</output>');
  });

  it("exhaustive: two rounds; the second sees the first round's concerns, and decides", async () => {
    h.model.enqueue(
      { text: 'done' },
      rejectMajor,
      rejectMajor,
      approve,
      rejectMajor,
      approve,
      approve,
      approve,
      approve,
    );
    const id = await h.submit(flow({ mode: 'exhaustive' }));
    const { workflow } = await h.untilEnd(id);
    expect(workflow.status).toBe('completed');
    expect(workflow.output).toMatchObject({ decision: 'review_approved', approvals: 3, rejections: 0 });
    const calls = reviewCalls();
    expect(calls).toHaveLength(8);
    for (const call of calls.slice(0, 4)) expect(text(call.request)).not.toContain('previous_round_concerns');
    for (const call of calls.slice(4)) {
      expect(text(call.request)).toContain('<previous_round_concerns>');
      expect(text(call.request)).toContain('the fix drops the error path');
    }
  });

  it('an optional review that blocks fails itself, not its parent', async () => {
    h.model.enqueue({ text: 'done' }, rejectMajor);
    const definition = flow({ mode: 'single', optional: true });
    definition.root.steps.push({ type: 'prompt', name: 'after', agent: 'dev', user: 'Go on' } as never);
    h.model.enqueue({ text: 'went on' });
    const id = await h.submit(definition);
    const { workflow } = await h.untilEnd(id);
    expect(workflow.status).toBe('completed');
    expect(workflow.output).toBe('went on');
    const check = (await h.deps.store.nodes(id)).find((n) => n.name === 'check');
    expect(check?.status).toBe('failed');
    expect(check?.error?.code).toBe('REVIEW_BLOCKED');
  });

  it('a required review that blocks fails the workflow with REVIEW_BLOCKED, naming the concerns', async () => {
    h.model.enqueue({ text: 'done' }, rejectMajor);
    const id = await h.submit(flow({ mode: 'single' }));
    const { workflow } = await h.untilEnd(id);
    expect(workflow.status).toBe('failed');
    expect(workflow.error).toMatchObject({ code: 'REVIEW_BLOCKED' });
    expect(workflow.error?.message).toContain('[major] the fix drops the error path');
  });

  it('redacts a secret pasted into instructions before it is stored or sent', async () => {
    h.model.enqueue({ text: 'done' }, approve);
    const id = await h.submit(flow({ mode: 'single', instructions: 'Check it; the db password: CANARY-review-pw-31' }));
    const { workflow } = await h.untilEnd(id);
    expect(workflow.status).toBe('completed');
    expect(JSON.stringify(workflow.definition)).not.toContain('CANARY-review-pw-31');
    for (const call of reviewCalls()) expect(text(call.request)).not.toContain('CANARY-review-pw-31');
    expect(text(reviewCalls()[0]?.request as LlmRequest)).toContain('Check it; the db password');
  });
});
