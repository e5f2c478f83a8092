import { type AgentConfig, DEFAULTS, type PromptNode } from '../../../domain/definition.js';
import type { CheckContext } from '../../node-context.js';
import { compileSchema, InvalidSchemaError } from './response-format.js';
import { checkSchemaBudget } from './schema-budget.js';

/**
 * A prompt's own submission checks (docs/design.md#workflow-definitions): its agent, model
 * overrides, responseFormat, retrieval and templates. Every violation names the offending field.
 */
export function checkPrompt(node: PromptNode, c: CheckContext): void {
  // Registered agents and selections are settled before these rules run (agent-resolution.ts).
  if (typeof node.agent !== 'string') {
    c.issue(`${c.path}.agent`, 'the selection was not settled');
    return;
  }
  const agent = c.agent(node.agent);
  if (!agent) c.issue(`${c.path}.agent`, `unknown agent "${node.agent}"`);
  else c.templates(agent.system, `agents.${node.agent}.system`);
  if (node.overrides?.model) c.model(node.overrides.model, `${c.path}.overrides.model`, agent);
  // The Anthropic Messages API of the pinned SDK takes no temperature: reject rather than drop it.
  const modelSpec = node.overrides?.model ?? agent?.model;
  const temperature = node.overrides?.temperature ?? agent?.temperature;
  if (temperature !== undefined && c.provider(modelSpec) === 'anthropic') {
    const where =
      node.overrides?.temperature === undefined
        ? `agents.${node.agent}.temperature`
        : `${c.path}.overrides.temperature`;
    c.issue(where, 'is not supported by anthropic/* models; remove it');
  }
  if (node.responseFormat) checkResponseFormat(node.responseFormat, `${c.path}.responseFormat`, c);
  if (node.retrieval) checkRetrieval(node, agent, c);
  c.templates(node.user, `${c.path}.user`);
  c.templates(node.data, `${c.path}.data`);
}

/** docs/design.md#agent-tools: a retrieval loop answers within maxSteps turns (prose, or JSON under responseFormat). */
function checkRetrieval(node: PromptNode, agent: AgentConfig | undefined, c: CheckContext): void {
  const retrieval = node.retrieval;
  if (!retrieval) return;
  const where = `${c.path}.retrieval`;
  c.corpus(retrieval.corpus, `${where}.corpus`);
  if (retrieval.guard && 'auto' in retrieval.guard && retrieval.guard.reference) {
    c.model(retrieval.guard.reference, `${where}.guard.reference`);
  }
  if (node.maxTurns !== undefined) {
    c.issue(`${c.path}.maxTurns`, 'has no effect with retrieval: its loop is bounded by retrieval.maxSteps; remove it');
  }
  const mode = retrieval.mode ?? DEFAULTS.retrieval.mode;
  if (mode === 'json-actions' && agent?.tools && agent.tools.length > 0) {
    c.issue(
      `agents.${node.agent}.tools`,
      'json-actions mode sends no tools to the model; remove them or use mode "tools"',
    );
  }
  const maxSteps = retrieval.maxSteps ?? DEFAULTS.retrieval.maxSteps;
  const guard = retrieval.guard;
  if (guard && 'minCalls' in guard && guard.minCalls >= maxSteps) {
    c.issue(
      `${where}.guard.minCalls`,
      `must be below maxSteps (${maxSteps}): the model needs a turn to finalize after its retrievals`,
    );
  }
}

/** The budget first: only a schema within it is compiled (docs/design.md#security). */
function checkResponseFormat(schema: Record<string, unknown>, path: string, c: CheckContext): void {
  const overBudget = checkSchemaBudget(schema, path);
  if (overBudget.length > 0) {
    for (const { path: where, message } of overBudget) c.issue(where, message);
    return;
  }
  try {
    compileSchema(schema);
  } catch (err) {
    const why = err instanceof InvalidSchemaError ? err.message : 'cannot be compiled';
    c.issue(path, `is not a valid JSON Schema: ${why}`);
  }
}
