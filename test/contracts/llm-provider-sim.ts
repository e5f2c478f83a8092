import type { SimulatedResponse } from '../../src/domain/llm.js';
import { createSimulatedProvider } from '../../src/llm/simulated.js';
import { countingClock } from '../support/manual-clock.js';
import { type Harness, MAX_TOKENS, type ProviderAdapter, SYSTEM, USER } from './llm-provider-harness.js';

/**
 * The embedded sim as the contract sees it: its answers are the request's own script, and a call
 * reaches it when its latency starts (every contract call waits 1 ms, or until aborted).
 */

/** Long enough that only an abort ends it (the sim's latency cap). */
const HANG_MS = 600_000;

function simHarness(): Harness<SimulatedResponse> {
  const clock = countingClock();
  let script: SimulatedResponse[] = [];
  let hang = false;
  let key = 0;
  return {
    provider: createSimulatedProvider({ clock }),
    answer: (...replies) => {
      for (const reply of replies) {
        if ('hang' in reply) hang = true;
        else script.push('native' in reply ? reply.native : reply);
      }
    },
    // Every call waits a latency (1 ms, or until aborted) so that reaching the provider is observable.
    request: (overrides = {}) => ({
      model: sim.model,
      system: SYSTEM,
      messages: [{ role: 'user', content: USER }],
      maxTokens: MAX_TOKENS,
      simulate: { scriptKey: `contract-${key}`, latencyMs: hang ? HANG_MS : 1, responses: script },
      ...overrides,
    }),
    reached: () => clock.sleeps.length,
    reset: () => {
      key++;
      script = [];
      hang = false;
      clock.sleeps.length = 0;
    },
    close: async () => {},
  };
}

export const sim: ProviderAdapter<SimulatedResponse> = {
  name: 'sim (src/llm/simulated.ts)',
  model: 'sonnet',
  start: async () => simHarness(),
  requestId: /^sim_/,
  toolUseId: /^toolu_sim_/,
  usage: {
    reply: { text: 'No bugs found.' },
    // Estimated at ~4 characters a token from the request's and the answer's text.
    expected: { inputTokens: Math.ceil((SYSTEM.length + USER.length) / 4), outputTokens: Math.ceil(14 / 4) },
  },
  temperature: 'ignored',
  stopReasons: [],
  dialectAnswers: [],
};
