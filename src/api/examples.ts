import type { WorkflowDefinition } from '../domain/definition.js';

/**
 * The quick-start example of DESIGN §3, verbatim: Swagger UI's "Try it out" body, the README's
 * curl tour and the API tests all use this one value so they cannot drift apart.
 */
export const quickStartExample = {
  name: 'review-pr',
  input: { code: 'function foo() { return 42; }' },
  agents: {
    analyst: { model: 'sim/sonnet', system: 'You review code for bugs.' },
    fixer: { model: 'sim/haiku', system: 'You propose fixes.' },
  },
  root: {
    type: 'sequence',
    name: 'main',
    steps: [
      {
        type: 'prompt',
        name: 'find-bugs',
        agent: 'analyst',
        user: 'Analyze this code for bugs',
        data: { code: '{{input.code}}' },
        responseFormat: {
          type: 'object',
          required: ['bugs', 'severity'],
          properties: {
            bugs: { type: 'array', items: { type: 'string' } },
            severity: { enum: ['low', 'medium', 'high'] },
          },
        },
      },
      {
        type: 'parallel',
        name: 'fixes',
        steps: [
          { type: 'prompt', name: 'fix-a', agent: 'fixer', user: 'Propose a fix for: {{steps.find-bugs.output}}' },
          { type: 'prompt', name: 'fix-b', agent: 'fixer', user: 'Propose a test for: {{steps.find-bugs.output}}' },
        ],
      },
    ],
  },
  correlationId: 'session-abc123',
} as const satisfies WorkflowDefinition;

/** Swagger UI's "Try it out" bodies of the corpora API (the README's corpus session uses the same). */
export const corpusExample = { name: 'handbook', description: 'The engineering handbook' };

export const documentsExample = {
  documents: [
    {
      title: 'Deploys',
      text: 'Deploys run from the main branch after CI is green. Roll back with the previous release tag.',
      metadata: { section: 'operations' },
    },
    {
      title: 'On-call',
      text: 'The on-call engineer acknowledges pages within 15 minutes and writes the incident log.',
    },
  ],
};
