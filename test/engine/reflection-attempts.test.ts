import { describe, expect, it } from 'vitest';
import type { WorkflowEvent } from '../../src/domain/events.js';
import { severity } from '../support/api-fixtures.js';
import { useEngineHarness } from '../support/engine-harness.js';
import { isReflectionRequest } from '../support/scripted-model.js';

/**
 * How many attempts a failing prompt gets, and how many paid reflection calls come with them
 * (docs/design.md#reflection-and-retries): when every workflow-level attempt fails, a node with
 * maxAttempts N is run N times with exactly N−1 reflection calls between them, none after the last
 * attempt (its answer could buy nothing); and a definition that sets no maxAttempts gets 3, at the
 * workflow level and at the prompt level alike.
 */
const h = useEngineHarness();

const notAReflection = (request: Parameters<typeof isReflectionRequest>[0]) => !isReflectionRequest(request);

/** A prompt whose every answer breaks its schema; prompt-level reflection off unless asked for. */
function failing(options: Record<string, unknown>, enableReflection = false) {
  return {
    name: 'always-wrong',
    agents: { a: { model: 'script/sonnet' } },
    root: { type: 'prompt', name: 'rate', agent: 'a', user: 'Rate it', responseFormat: severity, enableReflection },
    options,
  };
}

/** `attempts` answers that break the schema, each but the last followed by advice to retry. */
function scriptEveryAttemptFailing(attempts: number) {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    h.model.enqueue({ json: { severity: 'catastrophic' }, when: notAReflection, label: `attempt ${attempt}` });
    if (attempt < attempts) {
      h.model.enqueue({
        json: { shouldRetry: true, reason: 'another attempt may rate it' },
        when: isReflectionRequest,
        label: `reflection on attempt ${attempt}`,
      });
    }
  }
}

const reflectionCalls = () => h.model.calls.filter((call) => isReflectionRequest(call.request));
const attemptCalls = () => h.model.calls.filter((call) => !isReflectionRequest(call.request));
const reflectedAttempts = (events: readonly WorkflowEvent[]) =>
  events.flatMap((e) => (e.type === 'reflectionStart' ? [e.payload.attempt] : []));

describe('workflow-level reflection when every attempt fails', () => {
  it.each([1, 2, 3])(
    'maxAttempts %i: that many attempts, a paid reflection between each two, none after the last',
    async (maxAttempts) => {
      scriptEveryAttemptFailing(maxAttempts);
      const id = await h.submit(failing({ reflection: { enabled: true, maxAttempts } }));
      const { workflow, events } = await h.runUntilEnd(id);
      expect(workflow.status).toBe('failed');
      expect(workflow.error).toMatchObject({ code: 'VALIDATION_FAILED' });
      expect(reflectionCalls()).toHaveLength(maxAttempts - 1);
      expect(attemptCalls()).toHaveLength(maxAttempts);
      // One reflection per attempt but the last, in attempt order.
      expect(reflectedAttempts(events)).toEqual(Array.from({ length: maxAttempts - 1 }, (_, i) => i + 1));
      expect(events.filter((e) => e.type === 'agentPromptEnd' && e.payload.purpose === 'reflection')).toHaveLength(
        maxAttempts - 1,
      );
    },
  );
});

describe('maxAttempts left unset is 3', () => {
  it('at the workflow level: three attempts, two reflections, the advice request says "of 3"', async () => {
    scriptEveryAttemptFailing(3);
    const id = await h.submit(failing({ reflection: { enabled: true } }));
    const { workflow, events } = await h.runUntilEnd(id);
    expect(workflow.error).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(attemptCalls()).toHaveLength(3);
    expect(reflectionCalls()).toHaveLength(2);
    expect(reflectedAttempts(events)).toEqual([1, 2]);
    const asked = reflectionCalls().map((call) => call.request.messages[0]?.content);
    expect(asked[0]).toContain('failed on attempt 1 of 3');
    expect(asked[1]).toContain('failed on attempt 2 of 3');
  });

  it('at the prompt level: three answers in one conversation, then the node fails', async () => {
    for (let answer = 1; answer <= 3; answer++) {
      h.model.enqueue({ json: { severity: 'catastrophic' }, when: notAReflection, label: `answer ${answer}` });
    }
    const id = await h.submit(failing({}, true));
    const { workflow } = await h.runUntilEnd(id);
    expect(workflow.error).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(h.model.calls).toHaveLength(3);
    // The same conversation grows by the re-asks: 1, 3, then 5 messages.
    expect(h.model.calls.map((call) => call.request.messages.length)).toEqual([1, 3, 5]);
  });
});
