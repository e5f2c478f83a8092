/**
 * The amplification attack that once wrote 935 MB: a ~9 KB definition whose 50 prompts answer ~99 KB
 * each (the simulated model's instance of a `minLength` schema), then one tool loop that calls
 * `inspect_prior_outputs {count: 50}` for 49 turns — every turn's result is all 50 outputs (~5 MB).
 */
export const AMPLIFIED_PROMPTS = 50;
export const AMPLIFIED_TURNS = 49;

export function amplificationDefinition(name = 'amplify'): Record<string, unknown> {
  // One schema object for every prompt (identical responseFormats share one, per-schema work once).
  const big = { type: 'string', minLength: 99_000 };
  const steps: Record<string, unknown>[] = [];
  for (let i = 0; i < AMPLIFIED_PROMPTS; i++) {
    steps.push({ type: 'prompt', name: `p${i}`, agent: 'writer', user: `write ${i}`, responseFormat: big });
  }
  const reads = Array.from({ length: AMPLIFIED_TURNS }, () => ({
    toolUse: { name: 'inspect_prior_outputs', input: { count: 50 } },
  }));
  steps.push({ type: 'prompt', name: 'reader', agent: 'reader', user: 'read everything', maxTurns: 50 });
  return {
    name,
    agents: {
      writer: { model: 'sim/sonnet' },
      reader: {
        model: 'sim/sonnet',
        tools: ['inspect_prior_outputs'],
        simulate: { responses: [...reads, { text: 'done' }] },
      },
    },
    root: { type: 'sequence', name: 'all', steps },
  };
}
