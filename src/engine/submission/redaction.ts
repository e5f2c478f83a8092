import { redactAgent } from '../../domain/agents.js';
import {
  type AgentConfig,
  type ChildDefinition,
  childrenOf,
  type WorkflowDefinition,
  type WorkflowNode,
  withChildren,
} from '../../domain/definition.js';
import { redactSecrets, redactValue } from '../../domain/redact.js';
import type { Redactor } from '../node-context.js';
import { handlerOf } from '../nodes/table.js';

/**
 * baton never keeps a secret (docs/design.md#security): a submitted definition's free text and data — `input`,
 * prompt `user` and `data`, agent `system` and `simulate` scripts — go through the one redaction
 * function before the definition is stored or run, so a password pasted into a prompt or an API
 * token passed as input reaches neither the database nor the model. Schemas (`responseFormat`) are
 * left as they are: a property *named* `password` is a shape, not a secret. Each kind redacts its
 * own fields (its handler's `redact`); copy-on-write: a definition without secrets comes back as is.
 */
export function redactDefinition(definition: WorkflowDefinition): WorkflowDefinition {
  return redactScope(definition);
}

const redactor: Redactor = {
  text: redactSecrets,
  value: <T>(value: T) => redactValue(value) as T,
  child: (definition) => redactScope(definition),
};

function redactScope<D extends WorkflowDefinition | ChildDefinition>(definition: D): D {
  const input = redactValue(definition.input);
  const agents = redactAgents(definition.agents);
  const root = redactNode(definition.root);
  if (input === definition.input && agents === definition.agents && root === definition.root) return definition;
  return { ...definition, input, agents, root };
}

function redactAgents<T extends Record<string, AgentConfig> | undefined>(agents: T): T {
  if (agents === undefined) return agents;
  let copy: Record<string, AgentConfig> | undefined;
  for (const [name, agent] of Object.entries(agents)) {
    const redacted = redactAgent(agent);
    if (redacted === agent) continue;
    copy ??= { ...agents };
    copy[name] = redacted;
  }
  return (copy ?? agents) as T;
}

function redactNode(node: WorkflowNode): WorkflowNode {
  const own = handlerOf(node).redact?.(node, redactor) ?? node;
  const steps = childrenOf(own);
  const redacted = steps.map(redactNode);
  return redacted.every((step, i) => step === steps[i]) ? own : withChildren(own, redacted);
}
