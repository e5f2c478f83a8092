import {
  type AgentConfig,
  agentNamed,
  childrenOf,
  DEFAULTS,
  NODE_KINDS,
  type PromptNode,
  type ReviewNode,
  type WorkflowNode,
} from '../../domain/definition.js';
import { AppError, ValidationError } from '../../domain/errors.js';
import type { ModelCatalog } from '../../domain/ports.js';
import { forEachString, lookup, MISSING, refsIn } from '../../domain/templates.js';
import type { DefinitionRules } from '../node-context.js';
import { compileSchema, InvalidSchemaError } from '../nodes/prompt/response-format.js';
import { checkSchemaBudget } from '../nodes/prompt/schema-budget.js';
import { handlerOf } from '../nodes/table.js';

/**
 * Cross-field rules a zod shape cannot express (docs/design.md#workflow-definitions): unique node names, known agents,
 * models and tools, compilable responseFormat schemas, template references to earlier steps,
 * and the size limits. Every violation is reported with the path of the offending field.
 */
export interface Issue {
  path: string;
  message: string;
}

export interface RuleContext {
  models: ModelCatalog;
  toolNames: ReadonlySet<string>;
  defaultModel: string;
  /** MAX_LLM_CALLS_PER_WORKFLOW: a maxLlmCalls above it is refused (not clamped: the client learns it). */
  maxLlmCalls?: number;
}

interface Scope {
  agents: Record<string, AgentConfig>;
  input: unknown;
  /** The child definition's input may hold templates rendered only at run time. */
  inputKnown: boolean;
  /** Child workflows between the root and this scope. */
  workflowDepth: number;
}

/** What the whole tree shares: counts, and the root's limits over the child workflows it names. */
interface Tree {
  nodes: number;
  descendants: number;
  limits: Limits;
}

export interface CheckableDefinition {
  input?: unknown;
  agents?: Record<string, AgentConfig> | undefined;
  root: WorkflowNode;
  options?: { limits?: Partial<Limits> | undefined } | undefined;
}

type Limits = { [K in keyof (typeof DEFAULTS)['limits']]: number };

/** What a definition that passed refers to outside itself, for the checks that need a store. */
export interface DefinitionReferences {
  /** Corpus ids or names of prompts with `retrieval`, each with the path of its `corpus` field. */
  corpora: Map<string, string>;
}

export function checkDefinition(definition: CheckableDefinition, context: RuleContext): DefinitionReferences {
  const issues: Issue[] = [];
  const references: DefinitionReferences = { corpora: new Map() };
  const inputBytes = definition.input === undefined ? 0 : Buffer.byteLength(JSON.stringify(definition.input));
  if (inputBytes > DEFAULTS.maxInputBytes) {
    issues.push({ path: 'input', message: `is ${inputBytes} bytes; the limit is ${DEFAULTS.maxInputBytes}` });
  }
  const tree: Tree = { nodes: 0, descendants: 0, limits: { ...DEFAULTS.limits, ...definition.options?.limits } };
  const scope: Scope = { agents: definition.agents ?? {}, input: definition.input, inputKnown: true, workflowDepth: 0 };
  checkScope(definition, 'root', scope, 0, tree, context, issues, references);
  checkAgents(definition.agents ?? {}, 'agents', context, issues);
  if (tree.nodes > DEFAULTS.maxNodes) {
    issues.push({ path: 'root', message: `has ${tree.nodes} nodes; the limit is ${DEFAULTS.maxNodes}` });
  }
  if (issues.length > 0) {
    const first = issues[0] as Issue;
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    throw new ValidationError(`${first.path}: ${first.message}${more}`, issues);
  }
  return references;
}

function checkModel(spec: string, path: string, context: RuleContext, issues: Issue[]): string | undefined {
  try {
    return context.models.resolve(spec).provider;
  } catch (err) {
    issues.push({ path, message: err instanceof AppError ? err.message : 'unknown model' });
    return undefined;
  }
}

/** `auto` picks a tier by role (docs/design.md#complexity-allocation-selection-and-review): the agent needs one. */
function checkAuto(agent: AgentConfig | undefined, path: string, issues: Issue[]): boolean {
  if (!agent?.role)
    issues.push({ path, message: '"auto" needs the agent\'s role (planning, development, testing, review)' });
  return agent?.role !== undefined;
}

function checkAgents(agents: Record<string, AgentConfig>, path: string, context: RuleContext, issues: Issue[]) {
  for (const [name, agent] of Object.entries(agents)) {
    if (agent.model === 'auto') {
      checkAuto(agent, `${path}.${name}.model`, issues);
    }
    const provider =
      agent.model === 'auto'
        ? undefined
        : checkModel(agent.model ?? context.defaultModel, `${path}.${name}.model`, context, issues);
    if (agent.simulate && provider !== undefined && provider !== 'sim') {
      issues.push({ path: `${path}.${name}.simulate`, message: 'only applies to sim/* models' });
    }
    for (const [i, tool] of (agent.tools ?? []).entries()) {
      if (!context.toolNames.has(tool)) {
        issues.push({ path: `${path}.${name}.tools.${i}`, message: `unknown tool "${tool}"` });
      }
    }
  }
}

/** Checks one workflow (the root definition or a child definition): names are unique per workflow. */
function checkScope(
  definition: CheckableDefinition,
  path: string,
  scope: Scope,
  nesting: number,
  tree: Tree,
  context: RuleContext,
  issues: Issue[],
  references: DefinitionReferences,
): void {
  const seen = new Map<string, string>();
  const maxChildren = definition.options?.limits?.maxChildren ?? DEFAULTS.limits.maxChildren;
  const asked = definition.options?.limits?.maxLlmCalls;
  if (asked !== undefined && context.maxLlmCalls !== undefined && asked > context.maxLlmCalls) {
    // `path` ends in "root": the definition's options sit beside it.
    issues.push({
      path: `${path.slice(0, -'root'.length)}options.limits.maxLlmCalls`,
      message: `is ${asked}; this service allows at most ${context.maxLlmCalls} (MAX_LLM_CALLS_PER_WORKFLOW)`,
    });
  }
  let children = 0;

  function walk(node: WorkflowNode, nodePath: string, depth: number, before: Set<string>): void {
    tree.nodes++;
    if (depth > DEFAULTS.maxNesting) {
      issues.push({ path: nodePath, message: `nesting is deeper than ${DEFAULTS.maxNesting} levels` });
      return;
    }
    const duplicate = seen.get(node.name);
    if (duplicate)
      issues.push({ path: `${nodePath}.name`, message: `"${node.name}" is also the name of ${duplicate}` });
    else seen.set(node.name, nodePath);

    // The kind's own fields are its handler's to check; its steps are walked here.
    handlerOf(node).check?.(node, rules, { path: nodePath, before, depth });
    // Steps that run one after another see the earlier ones completed; concurrent steps see none.
    const inOrder = !NODE_KINDS[node.type].concurrentSteps;
    const done = new Set(before);
    for (const [i, step] of childrenOf(node).entries()) {
      walk(step, `${nodePath}.steps.${i}`, depth + 1, new Set(inOrder ? done : before));
      if (inOrder) collectNames(step, done);
    }
  }

  const rules: DefinitionRules = {
    prompt: (node, site) => checkPrompt(node, site.path, site.before),
    review: (node, site) => checkReview(node, site.path, site.before),
    childWorkflow(node, site) {
      const child = node.definition;
      checkTemplates(child.input, `${site.path}.definition.input`, site.before, scope);
      checkAgents(child.agents ?? {}, `${site.path}.definition.agents`, context, issues);
      if (!withinChildLimits(site.path)) return;
      const childScope: Scope = {
        agents: { ...scope.agents, ...child.agents },
        input: child.input,
        inputKnown: false,
        workflowDepth: scope.workflowDepth + 1,
      };
      checkScope(child, `${site.path}.definition.root`, childScope, site.depth + 1, tree, context, issues, references);
    },
  };

  /**
   * `options.limits` over the child workflows a definition names: each workflow starts at most
   * `maxChildren` (its own limit), the tree at most the root's `maxDescendants`, nested at most the
   * root's `maxDepth` deep. Child workflow nodes are static, so this is exact at submission.
   */
  function withinChildLimits(nodePath: string): boolean {
    children++;
    tree.descendants++;
    const { limits } = tree;
    let message: string | undefined;
    if (children > maxChildren) {
      message = `is child workflow ${children} of its workflow; options.limits.maxChildren allows ${maxChildren}`;
    } else if (tree.descendants > limits.maxDescendants) {
      message = `is descendant workflow ${tree.descendants}; the root's options.limits.maxDescendants allows ${limits.maxDescendants}`;
    } else if (scope.workflowDepth + 1 > limits.maxDepth) {
      message = `nests child workflows ${scope.workflowDepth + 1} deep; options.limits.maxDepth allows ${limits.maxDepth}`;
    }
    if (message !== undefined) issues.push({ path: nodePath, message });
    return message === undefined;
  }

  function checkPrompt(node: PromptNode, nodePath: string, before: ReadonlySet<string>) {
    // Registered agents and selections are settled before these rules run (agent-resolution.ts).
    if (typeof node.agent !== 'string') {
      issues.push({ path: `${nodePath}.agent`, message: 'the selection was not settled' });
      return;
    }
    const agent = agentNamed(scope.agents, node.agent);
    if (!agent) issues.push({ path: `${nodePath}.agent`, message: `unknown agent "${node.agent}"` });
    else checkTemplates(agent.system, `agents.${node.agent}.system`, before, scope);
    if (node.overrides?.model === 'auto') checkAuto(agent, `${nodePath}.overrides.model`, issues);
    else if (node.overrides?.model) checkModel(node.overrides.model, `${nodePath}.overrides.model`, context, issues);
    // The Anthropic Messages API of the pinned SDK takes no temperature: reject rather than drop it.
    const modelSpec = node.overrides?.model ?? agent?.model ?? context.defaultModel;
    const temperature = node.overrides?.temperature ?? agent?.temperature;
    if (temperature !== undefined && providerOf(modelSpec, context) === 'anthropic') {
      const where =
        node.overrides?.temperature === undefined
          ? `agents.${node.agent}.temperature`
          : `${nodePath}.overrides.temperature`;
      issues.push({ path: where, message: 'is not supported by anthropic/* models; remove it' });
    }
    if (node.responseFormat) checkResponseFormat(node.responseFormat, `${nodePath}.responseFormat`);
    if (node.retrieval) checkRetrieval(node, agent, nodePath);
    checkTemplates(node.user, `${nodePath}.user`, before, scope);
    checkTemplates(node.data, `${nodePath}.data`, before, scope);
  }

  /**
   * docs/design.md#complexity-allocation-selection-and-review: the reviewers judge the output of a step that completes
   * before the review.
   */
  function checkReview(node: ReviewNode, nodePath: string, before: ReadonlySet<string>) {
    const agent = agentNamed(scope.agents, node.agent);
    if (!agent) issues.push({ path: `${nodePath}.agent`, message: `unknown agent "${node.agent}"` });
    else checkTemplates(agent.system, `agents.${node.agent}.system`, before, scope);
    if (!before.has(node.target)) {
      const why =
        node.target === node.name
          ? 'is this review itself'
          : seen.has(node.target) || exists(definition.root, node.target)
            ? 'does not complete before this node'
            : 'is not a node of this workflow';
      issues.push({ path: `${nodePath}.target`, message: `step "${node.target}" ${why}` });
    }
    checkTemplates(node.instructions, `${nodePath}.instructions`, before, scope);
  }

  /**
   * docs/design.md#agent-tools: a retrieval loop answers within maxSteps turns (prose, or JSON under responseFormat).
   */
  function checkRetrieval(node: PromptNode, agent: AgentConfig | undefined, nodePath: string): void {
    const retrieval = node.retrieval;
    if (!retrieval) return;
    const where = `${nodePath}.retrieval`;
    if (!references.corpora.has(retrieval.corpus)) references.corpora.set(retrieval.corpus, `${where}.corpus`);
    if (retrieval.guard && 'auto' in retrieval.guard && retrieval.guard.reference) {
      checkModel(retrieval.guard.reference, `${where}.guard.reference`, context, issues);
    }
    if (node.maxTurns !== undefined) {
      issues.push({
        path: `${nodePath}.maxTurns`,
        message: 'has no effect with retrieval: its loop is bounded by retrieval.maxSteps; remove it',
      });
    }
    const mode = retrieval.mode ?? DEFAULTS.retrieval.mode;
    if (mode === 'json-actions' && agent?.tools && agent.tools.length > 0) {
      issues.push({
        path: `agents.${node.agent}.tools`,
        message: 'json-actions mode sends no tools to the model; remove them or use mode "tools"',
      });
    }
    const maxSteps = retrieval.maxSteps ?? DEFAULTS.retrieval.maxSteps;
    const guard = retrieval.guard;
    if (guard && 'minCalls' in guard && guard.minCalls >= maxSteps) {
      issues.push({
        path: `${where}.guard.minCalls`,
        message: `must be below maxSteps (${maxSteps}): the model needs a turn to finalize after its retrievals`,
      });
    }
  }

  /** The budget first: only a schema within it is compiled (docs/design.md#security). */
  function checkResponseFormat(schema: Record<string, unknown>, path: string): void {
    const overBudget = checkSchemaBudget(schema, path);
    if (overBudget.length > 0) {
      issues.push(...overBudget);
      return;
    }
    try {
      compileSchema(schema);
    } catch (err) {
      const why = err instanceof InvalidSchemaError ? err.message : 'cannot be compiled';
      issues.push({ path, message: `is not a valid JSON Schema: ${why}` });
    }
  }

  function checkTemplates(value: unknown, valuePath: string, before: ReadonlySet<string>, refScope: Scope): void {
    forEachString(value, valuePath, (text, textPath) => {
      for (const ref of refsIn(text)) {
        if (ref.kind === 'invalid') {
          issues.push({ path: textPath, message: `{{${ref.raw}}} is not {{input.<path>}} or {{steps.<name>.output}}` });
        } else if (ref.kind === 'step' && !before.has(ref.step)) {
          const why =
            seen.has(ref.step) || exists(definition.root, ref.step)
              ? 'does not complete before this node'
              : 'is not a node of this workflow';
          issues.push({ path: textPath, message: `{{${ref.raw}}}: step "${ref.step}" ${why}` });
        } else if (ref.kind === 'input' && refScope.inputKnown && lookup(refScope.input, ref.path) === MISSING) {
          issues.push({ path: textPath, message: `{{${ref.raw}}}: the workflow input has no "${ref.path.join('.')}"` });
        }
      }
    });
  }

  walk(definition.root, path, nesting, new Set());
}

function providerOf(spec: string, context: RuleContext): string | undefined {
  try {
    return context.models.resolve(spec).provider;
  } catch {
    return undefined;
  }
}

/** Names of a subtree, without descending into child workflows (they are separate scopes). */
function collectNames(node: WorkflowNode, into: Set<string>): void {
  into.add(node.name);
  for (const step of childrenOf(node)) collectNames(step, into);
}

function exists(node: WorkflowNode, name: string): boolean {
  const names = new Set<string>();
  collectNames(node, names);
  return names.has(name);
}
