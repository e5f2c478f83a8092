import { type AgentConfig, agentNamed, somePrompt, type WorkflowNode } from '../domain/definition.js';
import { AGENT_ROLES, type AgentRole } from '../domain/names.js';
import type { Complexity, Task, TaskSignal } from '../domain/task.js';
import { COMPLEXITY_ALLOCATIONS } from './allocation.js';

/**
 * Which agent roles a task needs: loki-mode's `identify_required_agents(task)`, the step before
 * candidates are filtered to those types (docs/workflows.md#complexity-routing-and-human-checkpoints). A definition that names
 * roles itself is taken at its word; otherwise the roles come from the task, by the table below.
 */

export interface RequiredRole {
  role: AgentRole;
  reason: string;
}

export interface RequiredAgents {
  /** `definition`: the roles its prompts name; `task`: derived from the task. */
  source: 'definition' | 'task';
  /** In AGENT_ROLES order, each role once. */
  roles: RequiredRole[];
}

interface RoleRule {
  signals: readonly TaskSignal[];
  /** Words of a task type (split on `_` and `-`) that stand for the same kind of work. */
  typeWords: readonly string[];
  roles: readonly AgentRole[];
  why: string;
}

/**
 * The one table. Scope signals (single_file … system_wide) only weigh on complexity, so no row
 * names them. A task whose signals name neither development nor testing (none, only scope, only
 * security) is matched by its type's words; with no row matching either, it is developed and tested.
 */
const ROLE_RULES: readonly RoleRule[] = [
  {
    signals: ['tests_only'],
    typeWords: ['test', 'tests', 'testing'],
    roles: ['testing'],
    why: 'only tests are written',
  },
  {
    signals: ['documentation', 'typo_fix'],
    typeWords: ['doc', 'docs', 'documentation', 'typo'],
    roles: ['development'],
    why: 'an edit with no behaviour to test',
  },
  {
    signals: ['bug_fix', 'feature', 'refactor', 'frontend', 'backend', 'full_stack', 'infrastructure'],
    typeWords: ['bug', 'fix', 'feature', 'refactor', 'frontend', 'backend', 'infrastructure', 'migration'],
    roles: ['development', 'testing'],
    why: 'code changes, and is tested',
  },
  {
    signals: ['architecture'],
    typeWords: ['architecture', 'design', 'plan', 'planning'],
    roles: ['planning', 'development', 'testing'],
    why: 'a design is planned before it is built and tested',
  },
  {
    signals: ['security'],
    typeWords: ['security', 'audit'],
    roles: ['review'],
    why: 'reviewed whatever the complexity',
  },
  // Stryker disable next-line ArrayDeclaration: a signal no task can carry matches nothing, as no signal does
  { signals: [], typeWords: ['review'], roles: ['review'], why: 'the work is a review' },
];

const DEFAULT_WORK: readonly AgentRole[] = ['development', 'testing'];

export function identifyRequiredAgents(
  task: Task | undefined,
  complexity: Complexity,
  definitionRoles: readonly RequiredRole[],
): RequiredAgents {
  if (definitionRoles.length > 0) return { source: 'definition', roles: inRoleOrder(definitionRoles) };

  // Stryker disable next-line ArrayDeclaration: a stray non-role entry is neither development nor testing and inRoleOrder drops it
  const found: RequiredRole[] = [];
  // Stryker disable next-line ArrayDeclaration: without a task, a made-up signal matches no row either
  const signals = new Set(task?.signals ?? []);
  for (const rule of ROLE_RULES) {
    const matched = rule.signals.filter((s) => signals.has(s));
    if (matched.length > 0)
      for (const role of rule.roles) found.push({ role, reason: `${matched.join(', ')}: ${rule.why}` });
  }
  if (!found.some((r) => r.role === 'development' || r.role === 'testing')) {
    // Stryker disable next-line ArrayDeclaration: without a task, a made-up word matches no row either
    const words = new Set(task?.type.split(/[_-]/) ?? []);
    const byType = ROLE_RULES.filter((rule) => rule.typeWords.some((w) => words.has(w)));
    // Stryker disable next-line OptionalChaining: a row matched by type words means there is a task
    for (const rule of byType)
      for (const role of rule.roles) found.push({ role, reason: `type ${task?.type}: ${rule.why}` });
    if (byType.length === 0)
      for (const role of DEFAULT_WORK) found.push({ role, reason: 'by default a task is developed and tested' });
  }

  const allocation = COMPLEXITY_ALLOCATIONS[complexity];
  if (allocation.planning !== null)
    found.push({ role: 'planning', reason: `${complexity}: the allocation plans on ${allocation.planning}` });
  if (allocation.review !== 'skip')
    found.push({ role: 'review', reason: `${complexity}: the allocation reviews (${allocation.review})` });
  return { source: 'task', roles: inRoleOrder(found) };
}

/**
 * The roles a workflow tree's prompts name: the `role` of each prompt's agent (of `agents`, or of a
 * child definition's agents merged over them) and each `select.role`. Registered agents are not
 * looked up: this is what the definition itself says.
 */
export function definitionRolesOf(root: WorkflowNode, agents: Readonly<Record<string, AgentConfig>>): RequiredRole[] {
  const roles: RequiredRole[] = [];
  somePrompt(root, agents, (prompt, scope) => {
    if (typeof prompt.agent !== 'string') {
      const { role } = prompt.agent.select;
      roles.push({ role, reason: `prompt ${prompt.name} selects a ${role} agent` });
    } else {
      const role = agentNamed(scope, prompt.agent)?.role;
      if (role !== undefined)
        roles.push({ role, reason: `prompt ${prompt.name} runs agent ${prompt.agent} (${role})` });
    }
    return false; // never satisfied: every prompt is visited
  });
  return roles;
}

/** Each role once, with its first reason, in AGENT_ROLES order. */
function inRoleOrder(roles: readonly RequiredRole[]): RequiredRole[] {
  return AGENT_ROLES.flatMap((role) => {
    const first = roles.find((r) => r.role === role);
    return first ? [first] : [];
  });
}
