import { describe, expect, it } from 'vitest';
import type { WorkflowNode } from '../../../src/domain/definition.js';
import type { Task } from '../../../src/domain/task.js';
import { definitionRolesOf, identifyRequiredAgents } from '../../../src/routing/required-agents.js';

const rolesOf = (task: Task | undefined, complexity: Parameters<typeof identifyRequiredAgents>[1]) =>
  identifyRequiredAgents(task, complexity, []).roles.map((r) => r.role);

describe('identifyRequiredAgents (loki-mode identify_required_agents)', () => {
  it('tests_only needs testing and no development; the allocation adds review from simple on', () => {
    expect(identifyRequiredAgents({ type: 'change', signals: ['tests_only'] }, 'simple', [])).toEqual({
      source: 'task',
      roles: [
        { role: 'testing', reason: 'tests_only: only tests are written' },
        { role: 'review', reason: 'simple: the allocation reviews (single)' },
      ],
    });
    expect(rolesOf({ type: 'change', signals: ['tests_only'] }, 'trivial')).toEqual(['testing']);
  });

  it('documentation and typo fixes are development only; code changes are developed and tested', () => {
    expect(rolesOf({ type: 'change', signals: ['typo_fix', 'single_file'] }, 'trivial')).toEqual(['development']);
    expect(rolesOf({ type: 'change', signals: ['documentation'] }, 'trivial')).toEqual(['development']);
    for (const signal of [
      'bug_fix',
      'feature',
      'refactor',
      'frontend',
      'backend',
      'full_stack',
      'infrastructure',
    ] as const)
      expect(rolesOf({ type: 'change', signals: [signal] }, 'trivial'), signal).toEqual(['development', 'testing']);
    expect(rolesOf({ type: 'change', signals: ['architecture'] }, 'trivial')).toEqual([
      'planning',
      'development',
      'testing',
    ]);
  });

  it('security is reviewed even where the allocation skips review', () => {
    const required = identifyRequiredAgents({ type: 'change', signals: ['security', 'typo_fix'] }, 'trivial', []);
    expect(required.roles).toEqual([
      { role: 'development', reason: 'typo_fix: an edit with no behaviour to test' },
      { role: 'review', reason: 'security: reviewed whatever the complexity' },
    ]);
  });

  it('a critical task needs all four: planning and review from the allocation', () => {
    expect(identifyRequiredAgents({ type: 'change', complexity: 'critical' }, 'critical', []).roles).toEqual([
      { role: 'planning', reason: 'critical: the allocation plans on opus' },
      { role: 'development', reason: 'by default a task is developed and tested' },
      { role: 'testing', reason: 'by default a task is developed and tested' },
      { role: 'review', reason: 'critical: the allocation reviews (exhaustive)' },
    ]);
  });

  it('without work signals the type decides, else the default; no task at all is developed and tested', () => {
    expect(rolesOf({ type: 'code_review' }, 'trivial')).toEqual(['review']);
    expect(rolesOf({ type: 'write-tests', signals: ['few_files'] }, 'trivial')).toEqual(['testing']);
    expect(identifyRequiredAgents({ type: 'bug_fix' }, 'trivial', []).roles).toEqual([
      { role: 'development', reason: 'type bug_fix: code changes, and is tested' },
      { role: 'testing', reason: 'type bug_fix: code changes, and is tested' },
    ]);
    // Signals that name the work win over the type.
    expect(rolesOf({ type: 'code_review', signals: ['tests_only'] }, 'trivial')).toEqual(['testing']);
    expect(rolesOf(undefined, 'simple')).toEqual(['development', 'testing', 'review']);
  });

  it.each<[string, string[], string]>([
    ['test tests testing', ['testing'], 'only tests are written'],
    ['doc docs documentation typo', ['development'], 'an edit with no behaviour to test'],
    [
      'bug fix feature refactor frontend backend infrastructure migration',
      ['development', 'testing'],
      'code changes, and is tested',
    ],
    [
      'architecture design plan planning',
      ['planning', 'development', 'testing'],
      'a design is planned before it is built and tested',
    ],
    ['security audit', ['review'], 'reviewed whatever the complexity'],
    ['review', ['review'], 'the work is a review'],
  ])('every word of "%s" in a task type picks its row, with its reason', (words, roles, why) => {
    for (const word of words.split(' ')) {
      const type = `some_${word}-work`;
      const required = identifyRequiredAgents({ type }, 'trivial', []).roles;
      expect(
        required.map((r) => r.role),
        word,
      ).toEqual(roles);
      expect(new Set(required.map((r) => r.reason)), word).toEqual(new Set([`type ${type}: ${why}`]));
    }
  });

  it.each<[string, string]>([
    ['tests_only', 'only tests are written'],
    ['documentation', 'an edit with no behaviour to test'],
    ['typo_fix', 'an edit with no behaviour to test'],
    ...['bug_fix', 'feature', 'refactor', 'frontend', 'backend', 'full_stack', 'infrastructure'].map(
      (signal): [string, string] => [signal, 'code changes, and is tested'],
    ),
    ['architecture', 'a design is planned before it is built and tested'],
  ])("the signal %s gives its row's reason", (signal, why) => {
    const required = identifyRequiredAgents({ type: 'change', signals: [signal] as Task['signals'] }, 'trivial', []);
    expect(new Set(required.roles.map((r) => r.reason))).toEqual(new Set([`${signal}: ${why}`]));
  });

  it('a review from a signal alone still leaves the work to the type', () => {
    expect(rolesOf({ type: 'bug_fix', signals: ['security'] }, 'trivial')).toEqual([
      'development',
      'testing',
      'review',
    ]);
  });

  it('takes the roles a definition names instead, each once, in role order', () => {
    const named = [
      { role: 'review', reason: 'prompt r runs agent rev (review)' },
      { role: 'development', reason: 'prompt a runs agent dev (development)' },
      { role: 'review', reason: 'prompt b selects a review agent' },
    ] as const;
    expect(identifyRequiredAgents({ type: 'change', complexity: 'critical' }, 'critical', named)).toEqual({
      source: 'definition',
      roles: [named[1], named[0]],
    });
  });
});

describe('definitionRolesOf', () => {
  it('reads agent roles (child definitions merged over the parent) and select.role', () => {
    const root: WorkflowNode = {
      type: 'sequence',
      name: 's',
      steps: [
        { type: 'prompt', name: 'write', agent: 'dev', user: 'x' },
        { type: 'prompt', name: 'plain', agent: 'norole', user: 'x' },
        { type: 'prompt', name: 'check', agent: { select: { role: 'testing' } }, user: 'x' },
        // A review node names its agent directly: it is not a role the tree asks for.
        { type: 'review', name: 'rev', agent: 'dev', target: 'write' },
        {
          type: 'workflow',
          name: 'child',
          definition: {
            name: 'c',
            agents: { dev: { role: 'planning' } },
            root: { type: 'prompt', name: 'inner', agent: 'dev', user: 'x' },
          },
        },
      ],
    };
    expect(definitionRolesOf(root, { dev: { role: 'development' }, norole: {} })).toEqual([
      { role: 'development', reason: 'prompt write runs agent dev (development)' },
      { role: 'testing', reason: 'prompt check selects a testing agent' },
      { role: 'planning', reason: 'prompt inner runs agent dev (planning)' },
    ]);
    expect(definitionRolesOf({ type: 'prompt', name: 'p', agent: 'unknown', user: 'x' }, {})).toEqual([]);
  });
});
