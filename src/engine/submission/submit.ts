import type { WorkflowDefinition } from '../../domain/definition.js';
import { ValidationError } from '../../domain/errors.js';
import type {
  AgentRegistry,
  CorpusStore,
  ModelCatalog,
  NewWorkflow,
  RandomSource,
  UsageAnalyticsStore,
} from '../../domain/ports.js';
import type { ToolRegistry } from '../../tools/registry.js';
import { shareIdenticalSchemas } from '../nodes/prompt/response-format.js';
import { type CostAwareDefaults, resolveAgents } from './agent-resolution.js';
import { planWorkflow } from './plan.js';
import { settlePlanningPatterns } from './planning-patterns.js';
import { redactDefinition } from './redaction.js';
import { routingOf } from './routing.js';
import { checkDefinition } from './rules.js';

/** What the submission pipeline reads: the registries it checks a definition against. */
export interface SubmissionDeps {
  agents: AgentRegistry;
  random: RandomSource;
  costAwareDefaults?: CostAwareDefaults | undefined;
  usage: Pick<UsageAnalyticsStore, 'taskModels'>;
  models: ModelCatalog;
  tools: ToolRegistry;
  corpora: Pick<CorpusStore, 'get'>;
  maxLlmCallsPerWorkflow: number;
}

/**
 * Everything a POST does before the store (docs/design.md#execution), once per submission: the
 * routing (complexity and allocation), registered agents and selections (so the checks see what the
 * run will use), the planning patterns, the checks of every node kind, the tenant's corpora, the
 * redaction, and the rows to persist — with the human checkpoint of a critical task and the agent
 * uses of its selections. Throws a ValidationError naming each offending field.
 */
export async function prepareSubmission(
  tenantId: string,
  submitted: WorkflowDefinition,
  deps: SubmissionDeps,
  now: () => number,
): Promise<NewWorkflow> {
  const routing = routingOf(submitted);
  const resolution = await resolveAgents(tenantId, submitted, routing.complexity, deps);
  const definition = await settlePlanningPatterns(tenantId, resolution.definition, { usage: deps.usage, now: now() });
  shareIdenticalSchemas(definition.root);
  const references = checkDefinition(definition, {
    models: deps.models,
    toolNames: new Set(deps.tools.names()),
    defaultModel: deps.models.defaultModel,
    maxLlmCalls: deps.maxLlmCallsPerWorkflow,
  });
  await checkCorpora(tenantId, references.corpora, deps.corpora);
  const createdAt = now();
  const planned = planWorkflow(redactDefinition(definition), { tenantId, now: createdAt, routing });
  // A critical task waits for a person (docs/design.md#complexity-allocation-selection-and-review):
  // created idle, its run only announces the wait.
  if (routing.allocation?.human_checkpoint) planned.workflow.checkpoint = { state: 'pending', reason: null, at: null };
  if (resolution.uses.length > 0) {
    const workflowId = planned.workflow.id;
    planned.agentUses = resolution.uses.map((use) => ({ ...use, workflowId, tenantId, createdAt }));
  }
  return planned;
}

/** Every corpus a retrieval names is one of the tenant's (checked again when the prompt runs). */
async function checkCorpora(
  tenantId: string,
  corpora: ReadonlyMap<string, string>,
  reader: Pick<CorpusStore, 'get'>,
): Promise<void> {
  const issues: Array<{ path: string; message: string }> = [];
  for (const [corpus, path] of corpora) {
    if (!(await reader.get(tenantId, corpus))) issues.push({ path, message: `you have no corpus "${corpus}"` });
  }
  const first = issues[0];
  if (first) throw new ValidationError(`${first.path}: ${first.message}`, issues);
}
