import type { WorkflowDefinition } from '../../domain/definition.js';

/**
 * The quick-start example of docs/design.md#workflow-definitions, verbatim: Swagger UI's "Try it out"
 * body, the README's curl tour and the API tests all use this one value so they cannot drift apart.
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

/**
 * The body example of POST /v1/tools/audit: two descriptions the waggle-os tools audit flagged
 * (a narrative-voice tool description, a cot-imperative parameter description) and a clean tool.
 */
export const toolAuditExample = {
  tools: [
    {
      name: 'search_skills',
      description:
        'Search for skills and tools you might need. Searches installed skills by content/name, and suggests built-in capabilities.',
      input_schema: {
        type: 'object',
        properties: { query: { type: 'string', description: 'Words to match against skill names and content.' } },
        required: ['query'],
      },
    },
    {
      name: 'create_skill',
      description: 'Create a reusable skill from markdown content.',
      input_schema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'Skill name, kebab-case.' },
          steps: { type: 'string', description: 'Step-by-step workflow instructions...' },
        },
        required: ['name', 'steps'],
      },
    },
    {
      name: 'retrieve',
      description: 'Return the chunks of the corpus most relevant to the query.',
      input_schema: {
        type: 'object',
        properties: { query: { type: 'string', description: 'A search query of 5-15 words.' } },
        required: ['query'],
      },
    },
  ],
};

/** Swagger UI's "Try it out" bodies of the corpora API (docs/retrieval.md#retrieval-corpora uses the same). */
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

/** A registered agent (POST /v1/agents): docs/workflows.md#agent-registry registers this one. */
export const agentExample = {
  name: 'reviewer-fast',
  config: { model: 'sim/haiku', role: 'review', system: 'You review code for bugs.' },
};
