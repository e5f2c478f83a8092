import type { FastifyInstance } from 'fastify';

/** Documents a retrieval test can ask for by topic; the rest of the corpus is varied filler. */
export const FACTS = [
  {
    title: 'Danube',
    text: 'The Danube river flows through Vienna, Bratislava, Budapest and Belgrade before its delta on the Black Sea.',
  },
  {
    title: 'Rhine',
    text: 'The Rhine river rises in the Swiss Alps and passes Basel, Strasbourg, Cologne and Rotterdam on its way to the North Sea.',
  },
  {
    title: 'Tagus',
    text: 'The Tagus river crosses Toledo in Spain and reaches the Atlantic Ocean at Lisbon, the longest river of Iberia.',
  },
];

const WORDS =
  'alpha beacon cedar delta ember falcon granite harbor island juniper kestrel lantern meadow nectar orchid pebble quartz ' +
  'raven saffron timber umber valley willow xenon yarrow zephyr copper silver marble canyon glacier prairie tundra ' +
  'lagoon summit estuary plateau basalt coral fjord geyser'.split(' ');

/** Deterministic filler: document `i` of the corpus, 40-80 words from a small vocabulary. */
export function fillerDocument(i: number): { title: string; text: string } {
  let seed = (i + 1) * 2654435761;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed;
  };
  const length = 40 + (next() % 41);
  const words: string[] = [];
  for (let w = 0; w < length; w++) words.push(WORDS[next() % WORDS.length] as string);
  return { title: `Filler ${i}`, text: `${words.join(' ')}.` };
}

/** Creates a corpus of `FACTS` plus `fillers` filler documents; returns its id. */
export async function seedCorpus(
  app: FastifyInstance,
  name: string,
  headers: Record<string, string> = {},
  fillers = 220,
): Promise<string> {
  const created = await app.inject({ method: 'POST', url: '/v1/corpora', payload: { name }, headers });
  if (created.statusCode !== 201) throw new Error(`POST /v1/corpora answered ${created.statusCode}: ${created.body}`);
  const id = created.json().id as string;
  const documents = [...FACTS, ...Array.from({ length: fillers }, (_, i) => fillerDocument(i))];
  const added = await app.inject({
    method: 'POST',
    url: `/v1/corpora/${id}/documents`,
    payload: { documents },
    headers,
  });
  if (added.statusCode !== 201) throw new Error(`adding documents answered ${added.statusCode}: ${added.body}`);
  return id;
}

/**
 * A workflow of one retrieval prompt over the `rivers` corpus ("Which cities does the Danube
 * pass?"), agent `reader` on `model`; `prompt` adds to (or overrides) the prompt node.
 */
export function riversWorkflow(
  model: string,
  retrieval: Record<string, unknown>,
  prompt: Record<string, unknown> = {},
) {
  return {
    name: 'rivers',
    agents: { reader: { model } },
    root: {
      type: 'prompt',
      name: 'answer',
      agent: 'reader',
      user: 'Which cities does the Danube pass?',
      retrieval: { corpus: 'rivers', ...retrieval },
      ...prompt,
    },
    options: { cache: false },
  };
}
