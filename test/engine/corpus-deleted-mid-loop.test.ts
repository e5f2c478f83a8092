import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { useOpenAiTestApp, waitForStatus } from '../support/build-app.js';
import { riversWorkflow, seedCorpus } from '../support/corpus-fixture.js';
import type { RecordedRequest } from '../support/fake-anthropic.js';
import { chatText, chatToolCall } from '../support/fake-openai.js';

/**
 * A corpus deleted while a retrieval loop runs on it gave the model a generic
 * "tool failed" and logged an unexpected error. It is a refusal the model reads (the corpus is
 * gone), nothing is logged as a fault, and the model can still answer.
 */
type ChatMessage = { role: string; content: string | null };

const lines: string[] = [];
const logger = createLogger({ level: 'debug', destination: { write: (line: string) => lines.push(line) } });

describe('a corpus deleted in the middle of a retrieval loop', () => {
  const app = useOpenAiTestApp({ overrides: { logger } });

  it('the next retrieve is refused with NOT_FOUND, the node still answers, nothing is logged as a fault', async () => {
    const corpusId = await seedCorpus(app.t.app, 'rivers');
    let calls = 0;
    app.fake.setDefault(async (request: RecordedRequest) => {
      calls++;
      if (calls === 1) return { body: chatToolCall('retrieve', { query: 'Danube cities' }) };
      if (calls === 2) {
        const deleted = await app.t.app.inject({ method: 'DELETE', url: `/v1/corpora/${corpusId}` });
        if (deleted.statusCode !== 204) throw new Error(`DELETE answered ${deleted.statusCode}: ${deleted.body}`);
        return { body: chatToolCall('retrieve', { query: 'Danube bridges' }) };
      }
      const messages = (request.body as { messages: ChatMessage[] }).messages;
      return { body: chatText(`answer after: ${messages.at(-1)?.content}`) };
    });
    const res = await app.t.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      payload: riversWorkflow('openai/gpt-reader', { mode: 'tools', maxSteps: 4 }),
    });
    expect(res.statusCode, res.body).toBe(202);
    const done = await waitForStatus(app.t.app, res.json().id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(calls).toBe(3);
    // What the model read after the second retrieve: the refusal, naming the corpus.
    const third = app.fake.requests.at(-1) as RecordedRequest;
    const toolResult = (third.body as { messages: ChatMessage[] }).messages.at(-1)?.content ?? '';
    expect(toolResult).toContain('NOT_FOUND');
    expect(toolResult).toContain(`corpus ${corpusId} not found`);
    expect(toolResult).not.toContain('failed');
    const faults = lines.filter((line) => line.includes('"unexpected error"'));
    expect(faults).toEqual([]);
  });
});
