import { type AgentConfig, agentNamed, childrenOf, DEFAULTS, type WorkflowNode } from '../domain/definition.js';
import { AppError, ValidationError } from '../domain/errors.js';
import type { ModelCatalog } from '../domain/ports.js';
import { compileSchema, InvalidSchemaError } from './response-format.js';
import { checkSchemaBudget } from './schema-budget.js';
import { forEachString, lookup, MISSING, refsIn } from './templates.js';

/**
 * Cross-field rules a zod shape cannot express (DESIGN §3): unique node names, known agents,
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
}

interface Scope {
  agents: Record<string, AgentConfig>;
  input: unknown;
  /** The child definition's input may hold templates rendered only at run time. */
  inputKnown: boolean;
}

export interface CheckableDefinition {
  input?: unknown;
  agents?: Record<string, AgentConfig> | undefined;
  root: WorkflowNode;
  options?: { limits?: Partial<Limits> | undefined } | undefined;
}

type Limits = { [K in keyof (typeof DEFAULTS)['limits']]: number };

export function checkDefinition(definition: CheckableDefinition, context: RuleContext): void {
  const issues: Issue[] = [];
  const inputBytes = definition.input === undefined ? 0 : Buffer.byteLength(JSON.stringify(definition.input));
  if (inputBytes > DEFAULTS.maxInputBytes) {
    issues.push({ path: 'input', message: `is ${inputBytes} bytes; the limit is ${DEFAULTS.maxInputBytes}` });
  }
  const counter = { nodes: 0 };
  checkScope(
    definition,
    'root',
    { agents: definition.agents ?? {}, input: definition.input, inputKnown: true },
    0,
    counter,
    context,
    issues,
  );
  checkAgents(definition.agents ?? {}, 'agents', context, issues);
  checkChildLimits(definition, issues);
  if (counter.nodes > DEFAULTS.maxNodes) {
    issues.push({ path: 'root', message: `has ${counter.nodes} nodes; the limit is ${DEFAULTS.maxNodes}` });
  }
  if (issues.length > 0) {
    const first = issues[0] as Issue;
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    throw new ValidationError(`${first.path}: ${first.message}${more}`, issues);
  }
}

/**
 * `options.limits` over the child workflows a definition names: each workflow starts at most
 * `maxChildren` (its own limit), the whole tree at most the root's `maxDescendants`, nested at most
 * the root's `maxDepth` deep. Child workflow nodes are static, so this is exact at submission.
 */
function checkChildLimits(definition: CheckableDefinition, issues: Issue[]): void {
  const root: Limits = { ...DEFAULTS.limits, ...definition.options?.limits };
  let descendants = 0;
  const visitScope = (scope: CheckableDefinition, path: string, depth: number): void => {
    const maxChildren = scope.options?.limits?.maxChildren ?? DEFAULTS.limits.maxChildren;
    let children = 0;
    const visit = (node: WorkflowNode, nodePath: string): void => {
      for (const [i, step] of childrenOf(node).entries()) visit(step, `${nodePath}.steps.${i}`);
      if (node.type !== 'workflow') return;
      children++;
      descendants++;
      if (children > maxChildren) {
        issues.push({
          path: nodePath,
          message: `is child workflow ${children} of its workflow; options.limits.maxChildren allows ${maxChildren}`,
        });
      } else if (descendants > root.maxDescendants) {
        issues.push({
          path: nodePath,
          message: `is descendant workflow ${descendants}; the root's options.limits.maxDescendants allows ${root.maxDescendants}`,
        });
      } else if (depth + 1 > root.maxDepth) {
        issues.push({
          path: nodePath,
          message: `nests child workflows ${depth + 1} deep; options.limits.maxDepth allows ${root.maxDepth}`,
        });
      } else visitScope(node.definition, `${nodePath}.definition.root`, depth + 1);
    };
    visit(scope.root, path);
  };
  visitScope(definition, 'root', 0);
}

function checkModel(spec: string, path: string, context: RuleContext, issues: Issue[]): string | undefined {
  try {
    return context.models.resolve(spec).provider;
  } catch (err) {
    issues.push({ path, message: err instanceof AppError ? err.message : 'unknown model' });
    return undefined;
  }
}

function checkAgents(agents: Record<string, AgentConfig>, path: string, context: RuleContext, issues: Issue[]) {
  for (const [name, agent] of Object.entries(agents)) {
    const provider = checkModel(agent.model ?? context.defaultModel, `${path}.${name}.model`, context, issues);
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
  counter: { nodes: number },
  context: RuleContext,
  issues: Issue[],
): void {
  const seen = new Map<string, string>();
  const completedBefore = new Set<string>();
  walk(definition.root, path, nesting, completedBefore);

  function walk(node: WorkflowNode, nodePath: string, depth: number, before: Set<string>): void {
    counter.nodes++;
    if (depth > DEFAULTS.maxNesting) {
      issues.push({ path: nodePath, message: `nesting is deeper than ${DEFAULTS.maxNesting} levels` });
      return;
    }
    const duplicate = seen.get(node.name);
    if (duplicate)
      issues.push({ path: `${nodePath}.name`, message: `"${node.name}" is also the name of ${duplicate}` });
    else seen.set(node.name, nodePath);

    switch (node.type) {
      case 'prompt':
        checkPrompt(node, nodePath, before);
        break;
      case 'sequence': {
        const done = new Set(before);
        for (const [i, step] of node.steps.entries()) {
          walk(step, `${nodePath}.steps.${i}`, depth + 1, new Set(done));
          collectNames(step, done);
        }
        break;
      }
      case 'parallel':
        for (const [i, step] of node.steps.entries()) walk(step, `${nodePath}.steps.${i}`, depth + 1, new Set(before));
        break;
      case 'workflow': {
        const child = node.definition;
        checkTemplates(child.input, `${nodePath}.definition.input`, before, scope);
        checkAgents(child.agents ?? {}, `${nodePath}.definition.agents`, context, issues);
        const childScope: Scope = {
          agents: { ...scope.agents, ...child.agents },
          input: child.input,
          inputKnown: false,
        };
        checkScope(child, `${nodePath}.definition.root`, childScope, depth + 1, counter, context, issues);
        break;
      }
    }
  }

  function checkPrompt(node: Extract<WorkflowNode, { type: 'prompt' }>, nodePath: string, before: Set<string>) {
    const agent = agentNamed(scope.agents, node.agent);
    if (!agent) issues.push({ path: `${nodePath}.agent`, message: `unknown agent "${node.agent}"` });
    else checkTemplates(agent.system, `agents.${node.agent}.system`, before, scope);
    if (node.overrides?.model) checkModel(node.overrides.model, `${nodePath}.overrides.model`, context, issues);
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
    checkTemplates(node.user, `${nodePath}.user`, before, scope);
    checkTemplates(node.data, `${nodePath}.data`, before, scope);
  }

  /** The budget first: only a schema within it is compiled (DESIGN §13). */
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

  function checkTemplates(value: unknown, valuePath: string, before: Set<string>, refScope: Scope): void {
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
  if (node.type === 'sequence' || node.type === 'parallel') for (const step of node.steps) collectNames(step, into);
}

function exists(node: WorkflowNode, name: string): boolean {
  const names = new Set<string>();
  collectNames(node, names);
  return names.has(name);
}
