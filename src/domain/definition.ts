import { z } from 'zod';
import { AgentSelectionSchema, ResolvedAgentSchema } from './agent-selection.js';
import { SimulateSchema } from './llm.js';
import { AGENT_ROLES, type AgentRole, MAX_STRING, ModelSpecSchema, NameSchema } from './names.js';
import { RetrievalSchema } from './retrieval.js';
import { TaskSchema } from './task.js';

/**
 * Workflow definitions (docs/design.md#workflow-definitions). Every object is strict: an unknown field is a 400, never
 * silently dropped. Cross-field rules (unique names, template references, limits) live in
 * `engine/submission/rules.ts`; this file is the shape.
 */

const TemperatureSchema = z.number().min(0).max(2);
const MaxTokensSchema = z.int().min(1).max(64_000);
const StopSchema = z.array(z.string().min(1).max(200)).max(8);

export const AgentConfigSchema = z.strictObject({
  model: ModelSpecSchema.optional().describe('Defaults to DEFAULT_MODEL; "auto" needs a role.'),
  role: z
    .enum(AGENT_ROLES)
    .optional()
    .describe('planning, development, testing or review: the tier "auto" picks at the task complexity.'),
  system: z.string().max(MAX_STRING).optional(),
  tools: z.array(z.string().min(1).max(64)).max(32).optional(),
  maxTokens: MaxTokensSchema.optional(),
  temperature: TemperatureSchema.optional(),
  stop: StopSchema.optional(),
  simulate: SimulateSchema.optional().describe('Script for the simulated provider (sim/*) only.'),
  enableCache: z.boolean().optional().describe('Serve identical requests from the response cache; default true.'),
  enableReflection: z
    .boolean()
    .optional()
    .describe('Reflection prefix on the system prompt, and prompt-level reflection for every prompt of this agent.'),
});
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

export const PromptOverridesSchema = z.strictObject({
  model: ModelSpecSchema.optional(),
  temperature: TemperatureSchema.optional(),
  maxTokens: MaxTokensSchema.optional(),
  stop: StopSchema.optional(),
  disableCache: z.boolean().optional().describe('Always call the provider for this prompt.'),
});

export const JsonSchemaObject = z.record(z.string(), z.unknown());

export const PromptNodeSchema = z.strictObject({
  type: z.literal('prompt'),
  name: NameSchema,
  agent: z
    .union([NameSchema, AgentSelectionSchema])
    .describe(
      'An agent of `agents` (or of a parent workflow), else a registered agent (POST /v1/agents); or a selection ' +
        'among candidates, settled at submission (the stored definition names the chosen agent).',
    ),
  resolved: ResolvedAgentSchema.optional().describe(
    'Set by the service at submission for registered and selected agents; refused in a request.',
  ),
  user: z.string().min(1).max(MAX_STRING),
  data: z.record(z.string().min(1).max(100), z.unknown()).optional(),
  responseFormat: JsonSchemaObject.optional().describe(
    'JSON Schema the answer must satisfy (validated with ajv). At most 32 KiB, 128 subschemas nested 16 deep and 32 ' +
      'patterns; patterns use RE2 syntax (no lookaround or backreferences, repetition counts ≤ 1000); the smallest ' +
      'instance it admits may not exceed 100 000 characters.',
  ),
  overrides: PromptOverridesSchema.optional(),
  maxTurns: z
    .int()
    .min(1)
    .max(50)
    .optional()
    .describe('Tool-loop turns; default 10. Not with retrieval, whose loop is bounded by retrieval.maxSteps.'),
  timeoutMs: z.int().min(1).max(3_600_000).optional().describe('Per-attempt deadline; default 120000.'),
  optional: z.boolean().optional().describe('A failure of this node does not fail its parent.'),
  enableReflection: z
    .boolean()
    .optional()
    .describe('Re-ask in the same conversation when the answer is not valid JSON or breaks responseFormat.'),
  retrieval: RetrievalSchema.optional().describe(
    'Answer from one of your corpora in a retrieve-then-finalize loop, with engagement recorded (docs/design.md#agent-tools). ' +
      'With responseFormat the final answer is a JSON value of that schema.',
  ),
});
export type PromptNode = z.infer<typeof PromptNodeSchema>;

/**
 * How a change is reviewed (docs/design.md#complexity-allocation-selection-and-review, the seed's allocation table):
 * how many reviewers, in how many rounds.
 */
export const REVIEW_MODES = ['skip', 'single', 'standard', 'deep', 'exhaustive'] as const;
export type ReviewMode = (typeof REVIEW_MODES)[number];

export const ReviewNodeSchema = z.strictObject({
  type: z.literal('review'),
  name: NameSchema,
  agent: z
    .union([NameSchema, AgentSelectionSchema])
    .describe(
      'The reviewer agent, every reviewer of the panel runs it: an agent of `agents` (or of a parent workflow), else ' +
        'a registered agent; or a selection among reviewers (role `review`), settled at submission. Its model ' +
        'defaults to the reviewer tier (sonnet) when unset or "auto".',
    ),
  resolved: ResolvedAgentSchema.optional().describe(
    'Set by the service at submission for registered and selected reviewers; refused in a request.',
  ),
  target: NameSchema.describe('An earlier step of this workflow: its output is what the reviewers judge.'),
  mode: z
    .enum(REVIEW_MODES)
    .optional()
    .describe(
      "skip (no call), single (1 reviewer), standard (3 in parallel), deep (3 + a devil's advocate), exhaustive " +
        "(deep twice, the second round seeing the first round's concerns). Default: the allocation's review mode at " +
        "the task's complexity.",
    ),
  instructions: z
    .string()
    .min(1)
    .max(MAX_STRING)
    .optional()
    .describe("What to review for; templates allowed, as in a prompt's `user`."),
  timeoutMs: z
    .int()
    .min(1)
    .max(3_600_000)
    .optional()
    .describe('Per-attempt deadline of the whole review; default 120000.'),
  optional: z.boolean().optional().describe('A blocked (or failed) review does not fail its parent.'),
});
export type ReviewNode = z.infer<typeof ReviewNodeSchema>;

/**
 * The name of a prompt's agent. Selections are settled at submission (engine/submission/agent-resolution.ts),
 * so every stored prompt names its agent; an unsettled one is a programming error.
 */
export function agentNameOf(node: AgentNode): string {
  if (typeof node.agent === 'string') return node.agent;
  throw new Error(`${node.type} "${node.name}": the agent selection was not settled at submission`);
}

/**
 * A node that runs an agent: a prompt, or a review, whose reviewers are agents like any other —
 * named, registered or selected, versioned (docs/design.md#registered-agents).
 */
export type AgentNode = PromptNode | ReviewNode;

/** The role an agent node's selected agent must have when its kind fixes one: a review's reviewers review. */
export function roleOfAgentNode(node: AgentNode): AgentRole | undefined {
  return node.type === 'review' ? 'review' : undefined;
}

/** The nodes directly under a node in the same workflow (a child workflow's tree is its own scope). */
export function childrenOf(node: WorkflowNode): readonly WorkflowNode[] {
  return node.type === 'sequence' || node.type === 'parallel' ? node.steps : [];
}

/** A copy of a container with other steps (a node without steps comes back as it is). */
export function withChildren<N extends WorkflowNode>(node: N, steps: WorkflowNode[]): N {
  return node.type === 'sequence' || node.type === 'parallel' ? { ...node, steps } : node;
}
export type NodeType = WorkflowNode['type'];
export const NODE_TYPES = ['prompt', 'sequence', 'parallel', 'review', 'workflow'] as const;

/**
 * What each node kind is, for code that classifies nodes (metrics, views) rather than runs them:
 * only the engine's handler table (src/engine/nodes/) executes, checks and redacts a kind.
 */
export const NODE_KINDS = {
  prompt: { callsModel: true, startsChild: false, concurrentSteps: false },
  sequence: { callsModel: false, startsChild: false, concurrentSteps: false },
  parallel: { callsModel: false, startsChild: false, concurrentSteps: true },
  review: { callsModel: true, startsChild: false, concurrentSteps: false },
  workflow: { callsModel: false, startsChild: true, concurrentSteps: false },
} as const satisfies Record<NodeType, { callsModel: boolean; startsChild: boolean; concurrentSteps: boolean }>;

/** The prompt nodes of a workflow's own tree (child workflows are their own scopes), by name. */
export function promptNodesOf(root: WorkflowNode): Map<string, PromptNode> {
  const prompts = new Map<string, PromptNode>();
  const visit = (node: WorkflowNode): void => {
    if (node.type === 'prompt') prompts.set(node.name, node);
    for (const step of childrenOf(node)) visit(step);
  };
  visit(root);
  return prompts;
}

/** Where an agent node sits: its dotted path, the agents in its scope, its key (`<child node>/<name>` in child workflows). */
export interface PromptSite {
  path: string;
  agents: Readonly<Record<string, AgentConfig>>;
  key: string;
  /** The options of the definitions around the node: the root's first, its own workflow's last. */
  options: ReadonlyArray<z.infer<typeof OptionsSchema> | undefined>;
}

/**
 * The tree with each agent node — prompt or review — (child workflow definitions included, each
 * with its agents merged over its parent's) replaced by `map`'s answer: in tree order, one node at a
 * time; unchanged subtrees are returned as they are.
 */
export async function mapAgentNodes(
  node: WorkflowNode,
  site: PromptSite,
  map: (node: AgentNode, site: PromptSite) => Promise<AgentNode>,
): Promise<WorkflowNode> {
  if (node.type === 'prompt' || node.type === 'review') return map(node, { ...site, key: `${site.key}${node.name}` });
  if (node.type === 'workflow') {
    const child = node.definition;
    const inner = {
      path: `${site.path}.definition.root`,
      agents: { ...site.agents, ...child.agents },
      key: `${site.key}${node.name}/`,
      options: [...site.options, child.options],
    };
    const root = await mapAgentNodes(child.root, inner, map);
    return root === child.root ? node : { ...node, definition: { ...child, root } };
  }
  const steps: WorkflowNode[] = [];
  let changed = false;
  for (const [i, step] of childrenOf(node).entries()) {
    const mapped = await mapAgentNodes(step, { ...site, path: `${site.path}.steps.${i}` }, map);
    changed ||= mapped !== step;
    steps.push(mapped);
  }
  return changed ? withChildren(node, steps) : node;
}

/** mapAgentNodes over the prompts only. */
export function mapPrompts(
  node: WorkflowNode,
  site: PromptSite,
  map: (prompt: PromptNode, site: PromptSite) => Promise<PromptNode>,
): Promise<WorkflowNode> {
  return mapAgentNodes(node, site, async (n, s) => (n.type === 'prompt' ? map(n, s) : n));
}

/** Whether `test` holds for some agent node — prompt or review — of the tree (child workflow definitions included). */
export function someAgentNode(
  node: WorkflowNode,
  agents: Readonly<Record<string, AgentConfig>>,
  test: (node: AgentNode, agents: Readonly<Record<string, AgentConfig>>) => boolean,
): boolean {
  if (node.type === 'prompt' || node.type === 'review') return test(node, agents);
  if (node.type === 'workflow') {
    return someAgentNode(node.definition.root, { ...agents, ...node.definition.agents }, test);
  }
  return childrenOf(node).some((step) => someAgentNode(step, agents, test));
}

/** someAgentNode over the prompts only. */
export function somePrompt(
  node: WorkflowNode,
  agents: Readonly<Record<string, AgentConfig>>,
  test: (prompt: PromptNode, agents: Readonly<Record<string, AgentConfig>>) => boolean,
): boolean {
  return someAgentNode(node, agents, (n, scope) => n.type === 'prompt' && test(n, scope));
}

export const LimitsSchema = z.strictObject({
  maxDepth: z.int().min(0).max(8).optional().describe('Nesting depth of child workflows; default 3.'),
  maxChildren: z.int().min(0).max(100).optional().describe('Child workflows per workflow; default 10.'),
  maxDescendants: z.int().min(0).max(500).optional().describe('Child workflows under the root; default 50.'),
  maxLlmCalls: z
    .int()
    .min(1)
    .max(10_000)
    .optional()
    .describe(
      'Provider requests per workflow, every attempt counted (transport retries included: a limit on money); ' +
        'a call it refuses is not made. Default 200.',
    ),
});

export const ReflectionOptionsSchema = z.strictObject({
  enabled: z.boolean().optional().describe('Workflow-level reflection on failed nodes (and prompt-level everywhere).'),
  maxAttempts: z.int().min(1).max(3).optional().describe('Attempts in total, the first included; default 3.'),
  retryDelayMs: z.int().min(0).max(60_000).optional().describe('Pause before a reflected retry; default 0.'),
});

export const OptionsSchema = z.strictObject({
  timeoutMs: z.int().min(1).max(86_400_000).optional().describe('Whole-workflow deadline; default 600000.'),
  limits: LimitsSchema.optional(),
  cache: z.boolean().optional().describe('Response cache for the whole workflow; default true.'),
  reflection: ReflectionOptionsSchema.optional(),
  patterns: z
    .boolean()
    .optional()
    .describe(
      'Show planning prompts the top performing patterns of this task type (docs/analytics.md#successful-patterns); ' +
        'default true; a child workflow without it follows its parent.',
    ),
});

export const AgentsSchema = z.record(NameSchema, AgentConfigSchema);

/**
 * The agent of that name, own properties only: `constructor` or `toString` must not resolve to
 * Object.prototype's members and pass as an agent.
 */
export function agentNamed(
  agents: Readonly<Record<string, AgentConfig>> | undefined,
  name: string,
): AgentConfig | undefined {
  return agents !== undefined && Object.hasOwn(agents, name) ? agents[name] : undefined;
}

/**
 * Container nodes nest nodes, so their schemas are recursive. zod 4 reads a getter in an object
 * shape on first use (and then keeps it), so a shape may name NodeSchema before it is defined and
 * the types are still inferred. Nesting depth is bounded before zod runs (api/http/body-guard.ts).
 */
const steps = () => z.array(NodeSchema).min(1).max(200);

export const SequenceNodeSchema = z.strictObject({
  type: z.literal('sequence'),
  name: NameSchema,
  get steps() {
    return steps();
  },
  optional: z.boolean().optional(),
});
export type SequenceNode = z.infer<typeof SequenceNodeSchema>;

export const ParallelNodeSchema = z.strictObject({
  type: z.literal('parallel'),
  name: NameSchema,
  get steps() {
    return steps();
  },
  optional: z.boolean().optional(),
});
export type ParallelNode = z.infer<typeof ParallelNodeSchema>;

export const ChildDefinitionSchema = z.strictObject({
  name: NameSchema,
  input: z.unknown().optional().describe('Templates here are rendered against the parent run.'),
  agents: AgentsSchema.optional().describe('Merged over the parent workflow agents.'),
  get root() {
    return NodeSchema;
  },
  options: OptionsSchema.optional(),
});
export type ChildDefinition = z.infer<typeof ChildDefinitionSchema>;

export const ChildWorkflowNodeSchema = z.strictObject({
  type: z.literal('workflow'),
  name: NameSchema,
  definition: ChildDefinitionSchema,
  optional: z.boolean().optional(),
});
export type ChildWorkflowNode = z.infer<typeof ChildWorkflowNodeSchema>;

export const NodeSchema = z.discriminatedUnion('type', [
  PromptNodeSchema,
  SequenceNodeSchema,
  ParallelNodeSchema,
  ReviewNodeSchema,
  ChildWorkflowNodeSchema,
]);
export type WorkflowNode = z.infer<typeof NodeSchema>;

export const WorkflowDefinitionSchema = z.strictObject({
  name: NameSchema,
  input: z.unknown().optional().describe('Any JSON, at most 512 KiB; referenced as {{input.<path>}}.'),
  agents: AgentsSchema.default({}),
  root: NodeSchema,
  options: OptionsSchema.optional(),
  correlationId: z.string().min(1).max(200).optional().describe('Group id for traces and metrics.'),
  task: TaskSchema.optional().describe('What the workflow is for: sets the efficiency baseline and groups rewards.'),
});
export type WorkflowDefinition = z.infer<typeof WorkflowDefinitionSchema>;

/**
 * Defaults applied where a definition is silent (docs/design.md#workflow-definitions, docs/design.md#execution,
 * docs/design.md#agent-tools).
 */
export const DEFAULTS = {
  maxTurns: 10,
  nodeTimeoutMs: 120_000,
  workflowTimeoutMs: 600_000,
  maxTokens: 1024,
  limits: { maxDepth: 3, maxChildren: 10, maxDescendants: 50, maxLlmCalls: 200 },
  maxNodes: 200,
  maxNesting: 8,
  maxInputBytes: 512 * 1024,
  /** Containers nested in any JSON a client or a model sends (a request body, an answer). */
  maxJsonDepth: 64,
  reflection: { maxAttempts: 3, retryDelayMs: 0 },
  /** Children an agent may spawn per minute in one workflow tree (docs/design.md#agent-tools). */
  spawnsPerMinute: 10,
  retrieval: { mode: 'tools', maxSteps: 5, maxChunks: 8 },
} as const;
