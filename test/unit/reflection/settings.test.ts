import { describe, expect, it } from 'vitest';
import type { PromptNode, WorkflowDefinition } from '../../../src/domain/definition.js';
import { agentLevelOf, promptLevelOf, reflectionBudgetOf, workflowLevelOf } from '../../../src/reflection/settings.js';

/** Where each reflection level is decided (docs/workflows.md#reflection): the rules the run and the API share. */
const prompt: PromptNode = { type: 'prompt', name: 'p', agent: 'a', user: 'hi' };
const definition = (options?: WorkflowDefinition['options']): WorkflowDefinition =>
  ({ name: 'w', root: prompt, ...(options ? { options } : {}) }) as WorkflowDefinition;

describe('reflection settings', () => {
  it('prompt level: the prompt, else its agent, else the workflow, else off', () => {
    const on = definition({ reflection: { enabled: true } });
    expect(promptLevelOf({ ...prompt, enableReflection: false }, { enableReflection: true }, on)).toEqual({
      enabled: false,
      source: 'prompt',
    });
    expect(promptLevelOf(prompt, { enableReflection: false }, on)).toEqual({ enabled: false, source: 'agent' });
    expect(promptLevelOf(prompt, {}, on)).toEqual({ enabled: true, source: 'workflow' });
    expect(promptLevelOf(prompt, undefined, definition())).toEqual({ enabled: false, source: 'default' });
  });

  it('agent and workflow levels, and the budget with its defaults (maxAttempts 3)', () => {
    expect(agentLevelOf({ enableReflection: true })).toEqual({ enabled: true, source: 'agent' });
    expect(agentLevelOf(undefined)).toEqual({ enabled: false, source: 'default' });
    expect(workflowLevelOf(definition({ reflection: { enabled: false } }))).toEqual({
      enabled: false,
      source: 'workflow',
    });
    expect(reflectionBudgetOf(definition())).toEqual({ maxAttempts: 3, retryDelayMs: 0 });
    expect(reflectionBudgetOf(definition({ reflection: { maxAttempts: 2, retryDelayMs: 5 } }))).toEqual({
      maxAttempts: 2,
      retryDelayMs: 5,
    });
  });
});
