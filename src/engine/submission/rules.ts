import {
  type AgentConfig,
  agentNamed,
  childrenOf,
  DEFAULTS,
  NODE_KINDS,
  type WorkflowNode,
} from '../../domain/definition.js';
import { AppError, ValidationError } from '../../domain/errors.js';
import type { ModelCatalog } from '../../domain/ports.js';
import { forEachString, lookup, MISSING, refsIn } from '../../domain/templates.js';
import type { CheckContext } from '../node-context.js';
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
    handlerOf(node).check?.(node, checkContext(nodePath, before, depth));
    // Steps that run one after another see the earlier ones completed; concurrent steps see none.
    const inOrder = !NODE_KINDS[node.type].concurrentSteps;
    const done = new Set(before);
    for (const [i, step] of childrenOf(node).entries()) {
      walk(step, `${nodePath}.steps.${i}`, depth + 1, new Set(inOrder ? done : before));
      if (inOrder) collectNames(step, done);
    }
  }

  /** The narrow context a kind's check gets: the rules of this scope, at one node. */
  function checkContext(nodePath: string, before: ReadonlySet<string>, depth: number): CheckContext {
    return {
      path: nodePath,
      before,
      depth,
      issue: (where, message) => issues.push({ path: where, message }),
      agent: (name) => agentNamed(scope.agents, name),
      templates: (value, where) => checkTemplates(value, where, before, scope),
      model(spec, where, agent) {
        if (spec === 'auto') {
          checkAuto(agent, where, issues);
          return undefined;
        }
        return checkModel(spec, where, context, issues);
      },
      provider: (spec) => providerOf(spec ?? context.defaultModel, context),
      agents: (agents, where) => checkAgents(agents, where, context, issues),
      step: (name) =>
        before.has(name) ? 'before' : seen.has(name) || exists(definition.root, name) ? 'later' : 'absent',
      corpus(idOrName, where) {
        if (!references.corpora.has(idOrName)) references.corpora.set(idOrName, where);
      },
      child(child, where) {
        if (!withinChildLimits(where)) return;
        const childScope: Scope = {
          agents: { ...scope.agents, ...child.agents },
          input: child.input,
          inputKnown: false,
          workflowDepth: scope.workflowDepth + 1,
        };
        checkScope(child, `${where}.definition.root`, childScope, depth + 1, tree, context, issues, references);
      },
    };
  }

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
