import type { AgentConfig, ChildDefinition, WorkflowDefinition, WorkflowNode } from '../domain/definition.js';
import { redactSecrets, redactValue } from '../domain/redact.js';

/**
 * baton never keeps a secret (DESIGN §13): a submitted definition's free text and data — `input`,
 * prompt `user` and `data`, agent `system` and `simulate` scripts — go through the one redaction
 * function before the definition is stored or run, so a password pasted into a prompt or an API
 * token passed as input reaches neither the database nor the model. Schemas (`responseFormat`) are
 * left as they are: a property *named* `password` is a shape, not a secret. Copy-on-write: a
 * definition without secrets comes back as the same object.
 */
export function redactDefinition(definition: WorkflowDefinition): WorkflowDefinition {
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
    const system = agent.system === undefined ? undefined : redactSecrets(agent.system);
    const simulate = redactValue(agent.simulate) as AgentConfig['simulate'];
    if (system === agent.system && simulate === agent.simulate) continue;
    copy ??= { ...agents };
    copy[name] = {
      ...agent,
      ...(system === undefined ? {} : { system }),
      ...(simulate === undefined ? {} : { simulate }),
    };
  }
  return (copy ?? agents) as T;
}

function redactNode(node: WorkflowNode): WorkflowNode {
  switch (node.type) {
    case 'prompt': {
      const user = redactSecrets(node.user);
      const data = redactValue(node.data) as typeof node.data;
      return user === node.user && data === node.data ? node : { ...node, user, data };
    }
    case 'sequence':
    case 'parallel': {
      const steps = node.steps.map(redactNode);
      return steps.every((step, i) => step === node.steps[i]) ? node : { ...node, steps };
    }
    case 'workflow': {
      const definition = redactChild(node.definition);
      return definition === node.definition ? node : { ...node, definition };
    }
  }
}

function redactChild(child: ChildDefinition): ChildDefinition {
  const input = redactValue(child.input);
  const agents = redactAgents(child.agents);
  const root = redactNode(child.root);
  if (input === child.input && agents === child.agents && root === child.root) return child;
  return { ...child, input, agents, root };
}
