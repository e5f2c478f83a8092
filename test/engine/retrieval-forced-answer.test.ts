import { describe, expect, it } from 'vitest';
import { useOpenAiTestApp, waitForStatus } from '../support/build-app.js';
import { riversWorkflow, seedCorpus } from '../support/corpus-fixture.js';
import type { RecordedRequest } from '../support/fake-anthropic.js';
import { chatText } from '../support/fake-openai.js';

/**
 * In json-actions mode, a forced final answer (after maxSteps) that is itself a
 * retrieve action completed the node with that JSON as its output. It fails the node with
 * MAX_TURNS_EXCEEDED, like a forced answer that is empty: the budget is spent and there is no answer.
 */
type ChatMessage = { role: string; content: string | null };

describe('json-actions: the forced final answer', () => {
  const app = useOpenAiTestApp();

  it('a retrieve action as the forced answer fails the node with MAX_TURNS_EXCEEDED', async () => {
    await seedCorpus(app.t.app, 'rivers');
    const retrieve = JSON.stringify({ action: 'retrieve', query: 'Danube cities' });
    app.fake.setDefault(() => ({ body: chatText(retrieve) }));
    const res = await app.t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      payload: riversWorkflow('openai/gpt-reader', { mode: 'json-actions', maxSteps: 2 }),
    });
    expect(res.statusCode, res.body).toBe(202);
    const done = await waitForStatus(app.t.app, res.json().id);
    // The last request was the forced one: the model was asked for its answer and retrieved again.
    const last = app.fake.requests.at(-1) as RecordedRequest;
    const messages = (last.body as { messages: ChatMessage[] }).messages;
    expect(messages.at(-1)?.content).toContain('You have used all 2 turns.');
    expect(done.status).toBe('failed');
    expect(done.output).toBeNull();
    expect(done.error).toMatchObject({ code: 'MAX_TURNS_EXCEEDED' });
    expect((done.error as { message: string }).message).toContain('retrieve action');
  });
});
